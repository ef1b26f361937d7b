#!/usr/bin/env python3
"""Null-server benchmark harness (loopback only, every run bounded in time).

usage: bench.py throughput ROUNDS OUT.json [cands...]
       bench.py idle OUT.json [cands...]        # RSS idle / with 2000 idle conns + liveness
       bench.py slowloris OUT.json [cands...]   # 200 trickling conns, time a fresh request
Server pinned to CPU 1, load generator to CPU 0.
"""
import json, os, re, signal, socket, subprocess, sys, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(HERE, "bin")
C = os.path.join(HERE, "certs")
HZ = os.sysconf("SC_CLK_TCK")

CANDS = {
    "civetweb-70thr": (["civet_server", "9001", "70"], 9001, "http"),
    "civetweb-4thr": (["civet_server", "9002", "4"], 9002, "http"),
    "mhd-1thr": (["mhd_server", "9003", "1"], 9003, "http"),
    "beast-1thr": (["beast_server", "9004", "1"], 9004, "http"),
    "h2o-1thr": (["h2o_server", "9005"], 9005, "http"),
    "beast-buf4k": (["beast_server_buf4k", "9006", "1"], 9006, "http"),  # before the idle-buffer shrink
    # TLS variants (server cert rotation enabled in all of them)
    "civetweb-tls": (["civet_server", "9011", "70", f"{C}/server1.combined.pem"], 9011, "https"),
    "mhd-tls": (["mhd_server", "9013", "1", f"{C}/server1.pem", f"{C}/server1.key"], 9013, "https"),
    "beast-tls": (["beast_server", "9014", "1", f"{C}/server1.pem", f"{C}/server1.key"], 9014, "https"),
    "h2o-tls": (["h2o_server", "9015", f"{C}/server1.pem", f"{C}/server1.key"], 9015, "https"),
}

BODY = open(os.path.join(HERE, "body300.json"), "rb").read()
REQ = (b"POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(BODY)) + BODY


def start(name):
    argv, port, scheme = CANDS[name]
    log = open(os.path.join(HERE, "results", name + ".log"), "w")
    p = subprocess.Popen(["taskset", "-c", "1", os.path.join(BIN, argv[0])] + argv[1:], stdout=log, stderr=log)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    time.sleep(0.3)
    return p, port, scheme


def stop(p):
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def cpu_ticks(pid):
    s = open(f"/proc/{pid}/stat").read()
    f = s[s.rindex(")") + 2:].split()
    return int(f[11]) + int(f[12])  # utime + stime (fields 14,15)


def rss_kb(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])


def threads(pid):
    return len(os.listdir(f"/proc/{pid}/task"))


def wrk(port, scheme, conns, secs=10):
    t0 = None
    out = subprocess.run(["taskset", "-c", "0", "wrk", "-t1", f"-c{conns}", f"-d{secs}s", "--latency", "-s",
                          os.path.join(HERE, "post.lua"), f"{scheme}://127.0.0.1:{port}/x"],
                         capture_output=True, text=True, timeout=secs + 30).stdout
    req = int(re.search(r"(\d+) requests in", out).group(1))
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errs = re.search(r"Socket errors: (.*)", out)
    p50 = re.search(r"50%\s+(\S+)", out).group(1)
    p99 = re.search(r"99%\s+(\S+)", out).group(1)
    return dict(requests=req, rps=rps, non2xx=int(non2xx.group(1)) if non2xx else 0,
                sock_errors=errs.group(1) if errs else "", p50=p50, p99=p99)


def throughput(rounds, out, cands, conns_list=(1, 16, 64), secs=10):
    res = []
    for r in range(rounds):
        order = cands if r % 2 == 0 else list(reversed(cands))
        for name in order:
            p, port, scheme = start(name)
            idle = rss_kb(p.pid)
            for c in conns_list:
                t0 = cpu_ticks(p.pid)
                w = wrk(port, scheme, c, secs)
                t1 = cpu_ticks(p.pid)
                cpu_s = (t1 - t0) / HZ
                row = dict(round=r, cand=name, conns=c, idle_rss_kb=idle, rss_after_kb=rss_kb(p.pid),
                           threads=threads(p.pid), cpu_s=cpu_s,
                           cpu_us_per_req=1e6 * cpu_s / max(w["requests"], 1), **w)
                print(json.dumps(row), flush=True)
                res.append(row)
            stop(p)
    json.dump(res, open(out, "w"), indent=1)


def one_request(port, timeout=5.0):
    """Fresh connection, one POST; returns (seconds, status line) or (seconds, error)."""
    t0 = time.monotonic()
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        s.settimeout(max(0.01, timeout - (time.monotonic() - t0)))
        s.sendall(REQ)
        data = b""
        while b"\r\n\r\n" not in data or len(data.split(b"\r\n\r\n", 1)[1]) < 300:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        s.close()
        return time.monotonic() - t0, data.split(b"\r\n", 1)[0].decode(errors="replace")
    except Exception as e:
        return time.monotonic() - t0, "ERR " + type(e).__name__


def idle(out, cands, n=2000):
    res = []
    for name in cands:
        p, port, scheme = start(name)
        base = rss_kb(p.pid)
        base_thr = threads(p.pid)
        socks, fail = [], 0
        for i in range(n):
            try:
                socks.append(socket.create_connection(("127.0.0.1", port), timeout=2))
            except OSError:
                fail += 1
        time.sleep(2)
        # half of the conns also did one complete keep-alive request first? no: pure idle TCP.
        rss = rss_kb(p.pid)
        thr = threads(p.pid)
        lat, status = one_request(port, timeout=5)
        # how many of the idle conns are still open after 7 s (header/first-byte timeout 5 s)?
        time.sleep(5)
        alive = 0
        for s in socks:
            s.setblocking(False)
            try:
                d = s.recv(1)
                alive += 0 if d == b"" else 1
            except BlockingIOError:
                alive += 1
            except OSError:
                pass
        lat2, status2 = one_request(port, timeout=5)
        for s in socks:
            s.close()
        row = dict(cand=name, idle_rss_kb=base, threads_idle=base_thr, rss_2000_kb=rss, threads_2000=thr,
                   connect_fail=fail, fresh_req_s=round(lat, 4), fresh_status=status,
                   idle_alive_after_7s=alive, fresh_req2_s=round(lat2, 4), fresh_status2=status2)
        print(json.dumps(row), flush=True)
        res.append(row)
        stop(p)
    json.dump(res, open(out, "w"), indent=1)


def slowloris(out, cands, n=200, duration=14, probes=(1, 3, 6, 9, 12)):
    res = []
    for name in cands:
        p, port, scheme = start(name)
        stop_ev = threading.Event()
        stats = dict(opened=0, closed_by_server=0)
        lock = threading.Lock()

        def attacker():
            payload = b"POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 100000
            conns = []  # [sock, offset]
            while not stop_ev.is_set():
                while len(conns) < n and not stop_ev.is_set():
                    try:
                        s = socket.create_connection(("127.0.0.1", port), timeout=1)
                        s.setblocking(False)
                        conns.append([s, 0])
                        with lock:
                            stats["opened"] += 1
                    except OSError:
                        time.sleep(0.05)
                        break
                t0 = time.monotonic()
                alive = []
                for c in conns:
                    try:
                        c[0].send(payload[c[1]:c[1] + 1])
                        c[1] += 1
                        try:
                            if c[0].recv(4096) == b"":
                                raise OSError
                        except BlockingIOError:
                            pass
                        alive.append(c)
                    except OSError:
                        c[0].close()
                        with lock:
                            stats["closed_by_server"] += 1
                conns = alive  # re-open the closed ones next tick (hostile client)
                stop_ev.wait(max(0, 1.0 - (time.monotonic() - t0)))
            for c in conns:
                c[0].close()

        th = threading.Thread(target=attacker, daemon=True)
        th.start()
        t_start = time.monotonic()
        probes_out = []
        for t in probes:
            time.sleep(max(0, t_start + t - time.monotonic()))
            lat, status = one_request(port, timeout=5)
            probes_out.append(dict(t=t, s=round(lat, 4), status=status))
        time.sleep(max(0, t_start + duration - time.monotonic()))
        thr = threads(p.pid)
        rss = rss_kb(p.pid)
        stop_ev.set()
        th.join(5)
        ok = all(x["status"].startswith("HTTP/1.1 200") and x["s"] < 1 for x in probes_out)
        row = dict(cand=name, passed=ok, probes=probes_out, threads=thr, rss_kb=rss, **stats)
        print(json.dumps(row), flush=True)
        res.append(row)
        stop(p)
    json.dump(res, open(out, "w"), indent=1)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "throughput":
        rounds = int(sys.argv[2])
        out = sys.argv[3]
        cands = sys.argv[4:] or ["civetweb-70thr", "mhd-1thr", "beast-1thr", "h2o-1thr", "civetweb-4thr"]
        throughput(rounds, out, cands)
    elif mode == "idle":
        idle(sys.argv[2], sys.argv[3:] or ["civetweb-70thr", "mhd-1thr", "beast-1thr", "h2o-1thr"])
    elif mode == "slowloris":
        slowloris(sys.argv[2], sys.argv[3:] or ["civetweb-70thr", "mhd-1thr", "beast-1thr", "h2o-1thr"])
