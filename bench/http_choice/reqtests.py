#!/usr/bin/env python3
"""Requirement checks for each candidate (loopback only; every probe bounded in time).
usage: reqtests.py OUT.json [cands...]
"""
import json, os, shutil, signal, socket, ssl, subprocess, sys, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(HERE, "bin")
C = os.path.join(HERE, "certs")
BODY = open(os.path.join(HERE, "body300.json"), "rb").read()


def req_bytes(extra=b"", body=BODY, cl=None):
    cl = len(body) if cl is None else cl
    return (b"POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" + extra +
            b"Content-Length: %d\r\n\r\n" % cl) + body


def read_response(s, timeout=3.0):
    """read one HTTP/1.1 response (Content-Length framed). returns (status_line, headers, body) or raises."""
    s.settimeout(timeout)
    data = b""
    while b"\r\n\r\n" not in data:
        d = s.recv(65536)
        if not d:
            raise ConnectionError("closed" + (" after %d bytes" % len(data) if data else ""))
        data += d
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode(errors="replace").split("\r\n")
    hdrs = {l.split(":", 1)[0].lower(): l.split(":", 1)[1].strip() for l in lines[1:] if ":" in l}
    n = int(hdrs.get("content-length", "0"))
    while len(rest) < n:
        d = s.recv(65536)
        if not d:
            break
        rest += d
    return lines[0], hdrs, rest[:n]


def conn(port):
    return socket.create_connection(("127.0.0.1", port), timeout=3)


def wait_closed(s, limit):
    """seconds until peer closes (EOF/RST) while we stay silent; None if still open after limit."""
    t0 = time.monotonic()
    s.settimeout(0.2)
    while time.monotonic() - t0 < limit:
        try:
            d = s.recv(65536)
            if d == b"":
                return round(time.monotonic() - t0, 2)
        except socket.timeout:
            pass
        except OSError:
            return round(time.monotonic() - t0, 2)
    return None


def start(argv, port, env=None):
    log = open(os.path.join(HERE, "results", "req_" + os.path.basename(argv[0]) + f"_{port}.log"), "w")
    e = dict(os.environ, **(env or {}))
    p = subprocess.Popen(["taskset", "-c", "1", os.path.join(BIN, argv[0])] + argv[1:], stdout=log, stderr=log, env=e)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    time.sleep(0.2)
    return p


def stop(p):
    if p.poll() is not None:
        return p.returncode
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    return None


def safe(fn):
    try:
        return fn()
    except Exception as e:
        return "EXC " + type(e).__name__ + ": " + str(e)[:120]


# --------------------------------------------------------------------- plain-HTTP checks
def t_keepalive(port):
    s = conn(port)
    out = []
    for i in range(5):
        s.sendall(req_bytes())
        st, h, b = read_response(s)
        out.append(st.split(" ")[1])
    s.close()
    return "5 requests on one connection: " + ",".join(out)


def t_pipeline(port):
    s = conn(port)
    s.sendall(req_bytes() * 3)
    s.settimeout(3)
    data, t0 = b"", time.monotonic()
    while data.count(b"HTTP/1.1 200") < 3 and time.monotonic() - t0 < 3:
        try:
            d = s.recv(65536)
        except socket.timeout:
            break
        if not d:
            break
        data += d
    s.close()
    return f"{data.count(b'HTTP/1.1 200')} of 3 pipelined requests answered"


def t_h2c(port):
    r = subprocess.run(["curl", "-s", "-m", "3", "--http2-prior-knowledge", "-o", "/dev/null", "-w", "%{http_code} HTTP/%{http_version}",
                        "-X", "POST", "--data-binary", "@" + os.path.join(HERE, "body300.json"), f"http://127.0.0.1:{port}/x"],
                       capture_output=True, text=True)
    return r.stdout or ("curl rc=%d" % r.returncode)


def t_413(port, expect100=False):
    s = conn(port)
    t0 = time.monotonic()
    extra = b"Expect: 100-continue\r\n" if expect100 else b""
    s.sendall(req_bytes(extra, body=b"", cl=10 * 1024 ** 3))  # 10 GiB announced, no body sent
    st, h, b = read_response(s, timeout=3)
    dt = time.monotonic() - t0
    closed = wait_closed(s, 2)
    s.close()
    return f"{st} in {dt*1000:.1f} ms; conn closed after {closed}s; connection: {h.get('connection')}"


def t_chunked_big(port):
    s = conn(port)
    s.sendall(b"POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n")
    chunk = b"%x\r\n" % 65536 + b"a" * 65536 + b"\r\n"
    sent = 0
    t0 = time.monotonic()
    s.settimeout(3)
    try:
        for i in range(64):  # 4 MiB
            s.sendall(chunk)
            sent += 65536
        s.sendall(b"0\r\n\r\n")
    except OSError as e:
        pass
    try:
        st, h, b = read_response(s, timeout=3)
    except Exception as e:
        st = "no response (" + type(e).__name__ + ")"
    s.close()
    return f"sent {sent//1024} KiB chunked -> {st}"


def t_big_header(port, size=64 * 1024):
    s = conn(port)
    try:
        s.sendall(req_bytes(b"X-Big: " + b"a" * size + b"\r\n"))
    except OSError:
        pass
    try:
        st, h, b = read_response(s, timeout=3)
    except Exception as e:
        st = "no response (" + str(e) + ")"
    s.close()
    return f"{size//1024} KiB header -> {st}"


def t_header_timeout(port):
    s = conn(port)
    s.sendall(b"POST /x HTTP/1.1\r\n")
    t0 = time.monotonic()
    s.settimeout(0.2)
    i = 0
    while time.monotonic() - t0 < 20:
        try:
            s.send(b"X-Slow: a\r\n"[i % 11:i % 11 + 1])
            i += 1
        except OSError:
            return f"closed after {time.monotonic()-t0:.1f}s of 1 byte/s trickle"
        tw = time.monotonic()
        while time.monotonic() - tw < 1:
            try:
                d = s.recv(4096)
                if d == b"":
                    return f"closed after {time.monotonic()-t0:.1f}s of 1 byte/s trickle"
                if d.startswith(b"HTTP/"):
                    first = d.split(b"\r\n")[0].decode()
                    return f"answered {first} after {time.monotonic()-t0:.1f}s"
            except socket.timeout:
                pass
            except OSError:
                return f"reset after {time.monotonic()-t0:.1f}s"
    return "still open after 20 s trickle (no request-header deadline)"


def t_idle_first(port):
    s = conn(port)
    r = wait_closed(s, 40)
    return f"closed after {r}s" if r is not None else "open after 40 s"


def t_idle_keepalive(port):
    s = conn(port)
    s.sendall(req_bytes())
    read_response(s)
    r = wait_closed(s, 40)
    return f"closed after {r}s" if r is not None else "open after 40 s"


def t_conn_cap(port, cap=50, extra=10):
    socks = []
    for i in range(cap + extra):
        try:
            socks.append(conn(port))
        except OSError as e:
            break
    time.sleep(0.5)
    # how many of the over-cap connections were closed by the server right away?
    closed = 0
    for s in socks:
        s.setblocking(False)
        try:
            if s.recv(1) == b"":
                closed += 1
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    t0 = time.monotonic()
    try:
        s = conn(port)
        s.sendall(req_bytes())
        st = read_response(s, timeout=2)[0]
        s.close()
    except Exception as e:
        st = "fail: " + type(e).__name__
    full = f"{st} ({time.monotonic()-t0:.2f}s)"
    for s in socks[:20]:
        s.close()
    time.sleep(0.5)
    t0 = time.monotonic()
    try:
        s = conn(port)
        s.sendall(req_bytes())
        st2 = read_response(s, timeout=3)[0]
        s.close()
    except Exception as e:
        st2 = "fail: " + type(e).__name__
    for s in socks[20:]:
        s.close()
    return (f"opened {len(socks)} idle; {closed} closed by server at once; fresh request while full: {full}; "
            f"after closing 20: {st2} ({time.monotonic()-t0:.2f}s)")


PLAIN = {
    "civetweb": (["civet_server", "9201", "50"], 9201),  # 50 worker threads = the only cap
    "libmicrohttpd": (["mhd_server", "9202", "1"], 9202),
    "beast": (["beast_server", "9203", "1"], 9203),
    "h2o": (["h2o_server", "9204"], 9204),
}


def plain_checks(name):
    argv, port = PLAIN[name]
    p = start(argv, port, env={"HB_MAX_CONNS": "50"})
    r = {}
    r["keepalive"] = safe(lambda: t_keepalive(port))
    r["pipelining"] = safe(lambda: t_pipeline(port))
    r["h2c_prior_knowledge"] = safe(lambda: t_h2c(port))
    r["413_content_length_10GiB"] = safe(lambda: t_413(port))
    r["413_with_expect_100"] = safe(lambda: t_413(port, True))
    r["chunked_4MiB"] = safe(lambda: t_chunked_big(port))
    r["header_12KiB"] = safe(lambda: t_big_header(port, 12 * 1024))
    r["header_64KiB"] = safe(lambda: t_big_header(port, 64 * 1024))
    r["header_1MiB"] = safe(lambda: t_big_header(port, 1024 * 1024))
    # the three slow ones in parallel
    res = {}
    ths = [threading.Thread(target=lambda k=k, f=f: res.__setitem__(k, safe(f))) for k, f in
           (("header_timeout_trickle", lambda: t_header_timeout(port)), ("idle_before_first_request", lambda: t_idle_first(port)),
            ("idle_keepalive_after_request", lambda: t_idle_keepalive(port)))]
    [t.start() for t in ths]
    [t.join() for t in ths]
    r.update(res)
    r["conn_cap_50"] = safe(lambda: t_conn_cap(port))
    r["server_alive_at_end"] = p.poll() is None
    stop(p)
    return r


# --------------------------------------------------------------------- TLS checks
def k8s_secret_dir(name):
    """Kubernetes-style secret volume: tls.crt -> ..data/tls.crt, ..data -> ..v1 (atomic symlink swap)."""
    d = os.path.join(C, "rot-" + name)
    shutil.rmtree(d, ignore_errors=True)
    for v, src in (("..v1", "server1"), ("..v2", "server2")):
        os.makedirs(os.path.join(d, v))
        shutil.copy(os.path.join(C, src + ".pem"), os.path.join(d, v, "tls.crt"))
        shutil.copy(os.path.join(C, src + ".key"), os.path.join(d, v, "tls.key"))
        with open(os.path.join(d, v, "tls.combined.pem"), "w") as f:
            f.write(open(os.path.join(C, src + ".pem")).read() + open(os.path.join(C, src + ".key")).read())
    os.symlink("..v1", os.path.join(d, "..data"))
    for f in ("tls.crt", "tls.key", "tls.combined.pem"):
        os.symlink(os.path.join("..data", f), os.path.join(d, f))
    return d


def rotate(d):
    tmp = os.path.join(d, "..data_tmp")
    os.symlink("..v2", tmp)
    os.rename(tmp, os.path.join(d, "..data"))  # atomic, like kubelet's AtomicWriter


def curl_tls(port, *args):
    r = subprocess.run(["curl", "-s", "-m", "3", "--cacert", os.path.join(C, "ca.pem"), "-o", "/dev/null", "-D", "-",
                        "-w", "\n%{http_code} HTTP/%{http_version}", "-X", "POST", "--data-binary",
                        "@" + os.path.join(HERE, "body300.json"), *args, f"https://127.0.0.1:{port}/x"],
                       capture_output=True, text=True)
    lines = r.stdout.strip().split("\n")
    verified = [l.strip() for l in lines if l.lower().startswith("x-client-verified")]
    return (lines[-1] if r.stdout else "curl rc=%d" % r.returncode) + (" " + verified[0] if verified else "")


def peer_cn(port):
    ctx = ssl.create_default_context(cafile=os.path.join(C, "ca.pem"))
    with socket.create_connection(("127.0.0.1", port), timeout=3) as s:
        with ctx.wrap_socket(s, server_hostname="127.0.0.1") as t:
            subj = dict(x[0] for x in t.getpeercert()["subject"])
            return subj.get("commonName"), t.version()


TLS = {
    "civetweb": lambda d: (["civet_server", "9301", "8", d + "/tls.combined.pem", C + "/ca.pem"], 9301),
    "libmicrohttpd": lambda d: (["mhd_server", "9302", "1", d + "/tls.crt", d + "/tls.key", C + "/ca.pem"], 9302),
    "beast": lambda d: (["beast_server", "9303", "1", d + "/tls.crt", d + "/tls.key", C + "/ca.pem"], 9303),
    "h2o": lambda d: (["h2o_server", "9304", d + "/tls.crt", d + "/tls.key", C + "/ca.pem"], 9304),
}


def tls_checks(name):
    d = k8s_secret_dir(name)
    argv, port = TLS[name](d)
    p = start(argv, port)
    r = {}
    r["tls1.2"] = curl_tls(port, "--tlsv1.2", "--tls-max", "1.2")
    r["tls1.3"] = curl_tls(port, "--tlsv1.3")
    r["tls1.1_refused"] = curl_tls(port, "--tlsv1.1", "--tls-max", "1.1", "--ciphers", "DEFAULT@SECLEVEL=0")
    r["alpn_h2"] = curl_tls(port, "--http2")
    r["mtls_no_client_cert"] = curl_tls(port)
    r["mtls_good_client_cert"] = curl_tls(port, "--cert", C + "/client.pem", "--key", C + "/client.key")
    r["mtls_untrusted_client_cert"] = curl_tls(port, "--cert", C + "/badclient.pem", "--key", C + "/badclient.key")
    r["cert_before_rotation"] = safe(lambda: peer_cn(port))
    # keep-alive connection opened before rotation
    ka = None
    try:
        ctx = ssl.create_default_context(cafile=os.path.join(C, "ca.pem"))
        ka = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=3), server_hostname="127.0.0.1")
        ka.sendall(req_bytes())
        read_response(ka)
    except Exception as e:
        ka = None
    time.sleep(1.1)
    rotate(d)
    r["cert_after_rotation_new_conn"] = safe(lambda: peer_cn(port))
    r["old_keepalive_conn_after_rotation"] = safe(lambda: (ka.sendall(req_bytes()), read_response(ka)[0])[1]) if ka else "n/a"
    r["server_alive_at_end"] = p.poll() is None
    rc = stop(p)
    if rc is not None:
        r["server_exit_code"] = rc
    return r


if __name__ == "__main__":
    out = sys.argv[1]
    cands = sys.argv[2:] or ["libmicrohttpd", "beast", "h2o", "civetweb"]
    res = {}
    for c in cands:
        res[c] = {"plain": plain_checks(c), "tls": tls_checks(c)}
        print(json.dumps({c: res[c]}, indent=1), flush=True)
    json.dump(res, open(out, "w"), indent=1)
