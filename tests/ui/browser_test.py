#!/usr/bin/python3
"""The status page in a real browser: starts the real compatd, calls it as a
few Kubernetes clients (and as one with a <script> User-Agent), then drives
Debian's headless Chromium over the DevTools protocol (--remote-debugging-pipe,
Python's standard library only) through every view at 1280x800 and 390x844.

It checks the DOM of each view (a kubelet 1.31 client shown too old after it
called, WatchList's timeline with its real stages, the hostile User-Agent as
text), that the tables work with JavaScript disabled, that the gate filter and
the reload on a new catalog generation work with it on, and fails on any
console error, exception, Content-Security-Policy report, failed request or
HTTP error. Screenshots go to <build>/ui-screenshots/<view>-<width>x<height>.png.

  browser_test.py --compatd=build/service/compatd --out=build/ui-screenshots
"""

import argparse
import base64
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

DEADLINE_SECONDS = 50  # the whole test; ctest's timeout is the backstop
SIZES = [(1280, 800), (390, 844)]


class Failure(Exception):
    pass


def chromium_binary():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    raise Failure("chromium is not installed (scripts/install-deps.sh installs it)")


class Compatd:
    """The real binary on 127.0.0.1 with a free front-door port."""

    def __init__(self, binary, catalog, workdir):
        self.err_path = os.path.join(workdir, "compatd.err")
        self.err = open(self.err_path, "wb")
        self.proc = subprocess.Popen(
            [binary, "--listen=127.0.0.1:0", "--metrics-listen=",
             "--http-listen=127.0.0.1:0", "--catalog=" + catalog,
             "--reload-interval=0"],
            stdout=subprocess.DEVNULL, stderr=self.err)
        self.port = None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with open(self.err_path, "rb") as f:
                text = f.read().decode("utf-8", "replace")
            m = re.search(r"JSON on http://127\.0\.0\.1:(\d+)", text)
            if m and "serving catalog" in text:
                self.port = int(m.group(1))
            if self.port is not None and self.healthy():
                return  # ready: /healthz says 200, not just an open port
            if self.proc.poll() is not None:
                raise Failure("compatd exited at start-up:\n" + text)
            time.sleep(0.05)
        raise Failure("compatd did not answer /healthz 200 within 20 s")

    def healthy(self):
        try:
            with urllib.request.urlopen(self.url("/healthz"), timeout=2) as reply:
                return reply.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def call(self, path, body, headers):
        request = urllib.request.Request(self.url(path), data=body.encode(),
                                         headers=headers, method="POST")
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.err.close()


class Browser:
    """Headless Chromium and one page, over the DevTools pipe (fds 3 and 4)."""

    def __init__(self, workdir, deadline):
        self.deadline = deadline
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()
        profile = tempfile.mkdtemp(prefix="chromium-", dir=workdir)

        def child_fds():
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        self.log = open(os.path.join(workdir, "chromium.log"), "wb")
        self.proc = subprocess.Popen(
            [chromium_binary(), "--headless=new", "--no-sandbox",
             "--remote-debugging-pipe", "--user-data-dir=" + profile,
             "--no-first-run", "--no-default-browser-check",
             "--disable-gpu", "--disable-extensions", "--disable-sync",
             "--disable-background-networking", "--disable-component-update",
             "--disable-default-apps", "--disable-features=Translate,MediaRouter",
             "--hide-scrollbars", "--mute-audio", "--force-device-scale-factor=1",
             "--password-store=basic", "--use-mock-keychain", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
            pass_fds=(3, 4), preexec_fn=child_fds)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []
        self.session = None
        targets = self.send("Target.getTargets")["targetInfos"]
        page = [t for t in targets if t["type"] == "page"]
        if not page:
            page = [{"targetId": self.send("Target.createTarget",
                                           {"url": "about:blank"})["targetId"]}]
        self.session = self.send("Target.attachToTarget",
                                 {"targetId": page[0]["targetId"],
                                  "flatten": True}, session=False)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(domain + ".enable")

    def _read_message(self):
        while b"\0" not in self.buffer:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise Failure("the browser did not answer before the deadline")
            ready, _, _ = select.select([self.from_chrome], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(self.from_chrome, 1 << 20)
            if not chunk:
                raise Failure("chromium closed its DevTools pipe (see chromium.log)")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method, params=None, session=True):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self.to_chrome, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read_message()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise Failure("%s: %s" % (method, reply["error"]))
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_event(self, method, since):
        """The first event `method` at index >= since in self.events."""
        while True:
            for event in self.events[since:]:
                if event["method"] == method:
                    return event
            message = self._read_message()
            if "method" in message:
                self.events.append(message)

    def navigate(self, url):
        since = len(self.events)
        result = self.send("Page.navigate", {"url": url})
        if result.get("errorText"):
            raise Failure("navigating to %s: %s" % (url, result["errorText"]))
        self.wait_event("Page.loadEventFired", since)

    def evaluate(self, expression):
        result = self.send("Runtime.evaluate",
                           {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise Failure("evaluating %s: %s" % (expression, result["exceptionDetails"]))
        return result["result"].get("value")

    def resize(self, width, height):
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1,
                   "mobile": width < 600})

    def screenshot(self, path):
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def problems(self):
        """Console errors, exceptions, CSP and other browser errors, failed
        requests and HTTP errors seen so far."""
        found = []
        for event in self.events:
            method, params = event["method"], event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append("console.%s: %s" % (params["type"], json.dumps(params.get("args"))))
            elif method == "Runtime.exceptionThrown":
                found.append("exception: %s" % json.dumps(params.get("exceptionDetails")))
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                entry = params["entry"]
                found.append("browser error (%s): %s %s" % (entry.get("source"), entry.get("text"), entry.get("url", "")))
            elif method == "Network.loadingFailed":
                found.append("request failed: %s %s" % (params.get("errorText"), params.get("blockedReason", "")))
            elif method == "Network.responseReceived" and params["response"]["status"] >= 400:
                found.append("HTTP %d for %s" % (params["response"]["status"], params["response"]["url"]))
        return found

    def close(self):
        try:
            if self.proc.poll() is None:
                try:
                    self.send("Browser.close", session=False)
                except Failure:
                    pass
                self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            for fd in (self.to_chrome, self.from_chrome):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self.log.close()


def expect(condition, what):
    if not condition:
        raise Failure(what)
    print("  ok:", what)


def check_overview(browser):
    expect(browser.evaluate("document.getElementById('binary-version').textContent") == "1.36",
           "overview: binary version 1.36")
    expect(browser.evaluate("document.getElementById('generation').textContent") == "1",
           "overview: catalog generation 1")
    expect(browser.evaluate("document.getElementById('emulation-version').textContent") == "1.35",
           "overview: emulation version 1.35")
    expect(browser.evaluate("document.getElementById('target').textContent")
           .startswith("emulation 1.36, min-compatibility 1.35"), "overview: the upgrade target")
    expect(browser.evaluate("document.querySelector('#clients-summary .big').textContent")
           .startswith("1 out of allowance"), "overview: one client out of allowance")


def check_clients(browser):
    cell = browser.evaluate(
        "(function(){var c=document.querySelector('#client-matrix tr[data-component=\"kubelet\"] "
        "td[data-version=\"1.31\"]');return c&&[c.dataset.verdict,c.classList.contains('seen'),"
        "c.querySelector('.n').textContent]})()")
    expect(cell == ["too-old", True, "2"], "clients: kubelet 1.31 cell too old, seen, 2 requests (%s)" % cell)
    allowed = browser.evaluate(
        "Array.from(document.querySelectorAll('#client-matrix tr[data-component=\"kubelet\"] "
        "td[data-verdict=\"allowed\"]')).map(function(c){return c.dataset.version})")
    expect(allowed == ["1.32", "1.33", "1.34", "1.35"], "clients: kubelet allowed 1.32-1.35 (%s)" % allowed)
    at_target = browser.evaluate(
        "Array.from(document.querySelectorAll('#client-matrix-target tr[data-component=\"kubelet\"] "
        "td[data-verdict=\"allowed\"]')).map(function(c){return c.dataset.version})")
    expect(at_target == ["1.33", "1.34", "1.35", "1.36"],
           "clients: at the target 1.36, kubelet allowed 1.33-1.36 (%s)" % at_target)
    row = browser.evaluate(
        "Array.from(document.querySelectorAll('#clients tbody tr')).map(function(r){return "
        "r.cells[0].textContent+' '+r.cells[1].textContent+' '+r.dataset.verdict}).join('|')")
    expect("kubelet 1.31 too-old" in row, "clients: the table lists kubelet 1.31 too old")
    expect("kube-scheduler 1.35 allowed" in row, "clients: kube-scheduler 1.35 allowed")
    expect("kubelet <script>alert(1)</script> unknown" in row,
           "clients: the <script> User-Agent appears as text")
    expect(browser.evaluate("document.scripts.length") == 1 and
           browser.evaluate("window.compatdXss === undefined"),
           "clients: no script was injected")
    scope = browser.evaluate("document.getElementById('client-scope').textContent")
    expect(scope.startswith("this replica only This replica's clients only")
           and "without --prometheus-url" in scope,
           "clients: the page says it shows this replica's clients only (%s)" % scope)


WATCHLIST = [["Alpha", "1.27", "1.31", "off"], ["Beta", "1.32", "1.32", "on"],
             ["Beta", "1.33", "1.33", "off"], ["Beta", "1.34", "1.36", "on"]]
SEGMENTS = ("(function(sel){return Array.from(document.querySelectorAll(sel+' g.seg')).map("
            "function(g){return [g.dataset.stage,g.dataset.from,g.dataset.to,g.dataset.default]})})")


def check_features(browser):
    rows = browser.evaluate("document.querySelectorAll('#gates tbody tr').length")
    expect(rows == 240, "features: 240 gates listed (%s)" % rows)
    segments = browser.evaluate(SEGMENTS + "('#gate-WatchList')")
    expect(segments == WATCHLIST, "features: WatchList's timeline has its real stages (%s)" % segments)
    locked = browser.evaluate(SEGMENTS + "('#gate-WinDSR')")
    expect(locked and locked[-1][0] == "GA" and browser.evaluate(
        "document.querySelector('#gate-WinDSR g.seg:last-of-type').dataset.locked") == "true",
        "features: WinDSR ends GA and locked")


def check_filter(browser):
    browser.evaluate("(function(){var q=document.getElementById('filter-q');q.value='watchlist';"
                     "q.dispatchEvent(new Event('input'));})()")
    visible = browser.evaluate(
        "Array.from(document.querySelectorAll('#gates tbody tr')).filter(function(r){return !r.hidden})"
        ".map(function(r){return r.dataset.name})")
    expect(visible == ["WatchList", "WatchListClient"], "features: typing 'watchlist' filters the table (%s)" % visible)
    expect(browser.evaluate("location.search") == "?q=watchlist", "features: the filter is in the URL")


def check_feature(browser):
    expect(browser.evaluate("document.getElementById('gate').textContent") == "WatchList",
           "feature page: WatchList")
    expect(browser.evaluate(SEGMENTS + "('svg.tl')") == WATCHLIST, "feature page: the full timeline")
    expect(browser.evaluate("document.querySelectorAll('#specs tbody tr').length") == 4,
           "feature page: 4 versioned specs")


def check_plan(browser):
    steps = browser.evaluate("Array.from(document.querySelectorAll('#steps tbody th')).map("
                             "function(t){return t.textContent})")
    expect(len(steps) >= 2 and steps[-1] == "min-compatibility 1.35",
           "plan: steps up to min-compatibility 1.35 (%s)" % steps)
    sections = browser.evaluate("Array.from(document.querySelectorAll('section.plan-section'))"
                                ".map(function(s){return s.id})")
    expect(sections == ["plan-flags", "plan-feature-gates", "plan-apis", "plan-storage",
                        "plan-rollback", "plan-clients"], "plan: every section (%s)" % sections)
    kubelet = browser.evaluate(
        "Array.from(document.querySelectorAll('#plan-clients tbody tr')).filter(function(r){"
        "return r.textContent.indexOf('kubelet 1.31') >= 0}).map(function(r){return r.dataset.rule})")
    expect(kubelet and kubelet[0] == "client-too-old", "plan: kubelet 1.31 too old (%s)" % kubelet)


def check_apis(browser):
    expect(browser.evaluate("!!document.querySelector('#served tr[data-group-version=\"apps/v1\"]')"),
           "apis: apps/v1 served")
    expect(browser.evaluate("document.querySelector('#served tr[data-group-version=\"v1\"]')"
                            ".textContent.indexOf('pods') >= 0"), "apis: core v1 serves pods")


def check_api_use(browser):
    rows = browser.evaluate(
        "Array.from(document.querySelectorAll('#api-use tbody tr')).map(function(r){"
        "return [r.dataset.verdict, r.querySelector('td.component').textContent]})")
    expect(len(rows) == 1 and rows[0][0] == "API_USE_VERDICT_NOT_SERVED"
           and rows[0][1].startswith("cluster-autoscaler 1.28"),
           "api use: the autoscaler's policy/v1beta1 calls, not served (%s)" % rows)


# One audit batch as kube-apiserver's webhook posts it (audit.k8s.io/v1
# EventList, Metadata level): the cluster autoscaler listing
# policy/v1beta1 PodDisruptionBudgets (removed in 1.25) twice.
AUDIT_EVENT = (
    '{"level":"Metadata","auditID":"%s","stage":"ResponseComplete",'
    '"requestURI":"/apis/policy/v1beta1/poddisruptionbudgets","verb":"list",'
    '"user":{"username":"system:serviceaccount:kube-system:cluster-autoscaler",'
    '"groups":["system:serviceaccounts","system:authenticated"]},'
    '"sourceIPs":["10.0.0.12"],'
    '"userAgent":"cluster-autoscaler/v1.28.2 (linux/amd64) kubernetes/1a2b3c4",'
    '"objectRef":{"resource":"poddisruptionbudgets","apiGroup":"policy","apiVersion":"v1beta1"},'
    '"responseStatus":{"metadata":{},"status":"Failure","reason":"NotFound","code":404},'
    '"requestReceivedTimestamp":"2026-11-27T08:00:00.123456Z",'
    '"stageTimestamp":"2026-11-27T08:00:00.125012Z",'
    '"annotations":{"authorization.k8s.io/decision":"allow"}}')
AUDIT_BATCH = ('{"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":[%s,%s]}'
               % (AUDIT_EVENT % "a1", AUDIT_EVENT % "a2"))

VIEWS = [
    ("overview", "/ui/", check_overview),
    ("clients", "/ui/clients", check_clients),
    ("features", "/ui/features", check_features),
    ("feature", "/ui/features/WatchList", check_feature),
    ("apis", "/ui/apis", check_apis),
    ("api-use", "/ui/api-use", check_api_use),
    ("plan", "/ui/plan", check_plan),
]

CLUSTER = """
cluster:
  emulationVersion: "1.35"
  upgradeTarget: {emulationVersion: "1.36"}
"""


def run(args, workdir):
    deadline = time.monotonic() + DEADLINE_SECONDS
    # The embedded catalog, with a cluster at emulation 1.35 that is being
    # upgraded to 1.36.
    catalog = os.path.join(workdir, "catalog.yaml")
    shutil.copyfile(args.catalog, catalog)
    with open(catalog, "a") as f:
        f.write(CLUSTER)
    compatd = Compatd(args.compatd, catalog, workdir)
    browser = None
    try:
        # The clients the matrix shows.
        feature = '{"name":"WatchList"}'
        for _ in range(2):
            compatd.call("/v1/GetFeature", feature,
                         {"User-Agent": "kubelet/v1.31.4 (linux/amd64) kubernetes/abc1234"})
        compatd.call("/v1/GetFeature", feature,
                     {"x-kubernetes-component": "kube-scheduler", "x-kubernetes-version": "v1.35.1"})
        compatd.call("/v1/GetFeature", feature,
                     {"User-Agent": "kubectl/v1.36.0 (linux/amd64) kubernetes/abc1234"})
        compatd.call("/v1/GetFeature", feature,
                     {"User-Agent": "kubelet/<script>alert(1)</script>"})
        # What the API use view shows.
        compatd.call("/audit/v1/events", AUDIT_BATCH, {"Content-Type": "application/json"})

        browser = Browser(workdir, deadline)
        os.makedirs(args.out, exist_ok=True)
        for width, height in SIZES:
            browser.resize(width, height)
            for name, path, check in VIEWS:
                print("%s at %dx%d" % (path, width, height))
                browser.navigate(compatd.url(path))
                check(browser)
                browser.screenshot(os.path.join(args.out, "%s-%dx%d.png" % (name, width, height)))

        print("JavaScript on: the gate filter")
        browser.resize(1280, 800)
        browser.navigate(compatd.url("/ui/features"))
        check_filter(browser)

        print("JavaScript off: the tables")
        browser.send("Emulation.setScriptExecutionDisabled", {"value": True})
        browser.navigate(compatd.url("/ui/features?q=watchlist&stage=BETA"))
        names = browser.evaluate("Array.from(document.querySelectorAll('#gates tbody tr'))"
                                 ".map(function(r){return r.dataset.name})")
        expect(names == ["WatchList", "WatchListClient"], "features without JS: the server filters (%s)" % names)
        browser.navigate(compatd.url("/ui/clients"))
        check_clients(browser)
        browser.send("Emulation.setScriptExecutionDisabled", {"value": False})

        print("A new catalog generation reloads the page")
        browser.navigate(compatd.url("/ui/"))
        with open(catalog, "a") as f:
            f.write("\n# a change\n")
        os.kill(compatd.proc.pid, signal.SIGHUP)
        since = len(browser.events)
        browser.wait_event("Page.loadEventFired", since)
        expect(browser.evaluate("document.getElementById('generation').textContent") == "2",
               "overview: reloaded itself at generation 2")

        print("A rejected reload is shown in red")
        with open(catalog, "w") as f:
            f.write("binaryVersion: \"1.36\"\nnoSuchKey: <b>1</b>\n")
        os.kill(compatd.proc.pid, signal.SIGHUP)
        for _ in range(50):
            browser.navigate(compatd.url("/ui/"))
            if browser.evaluate("!!document.getElementById('last-error')"):
                break
            time.sleep(0.1)
        expect(browser.evaluate("getComputedStyle(document.getElementById('last-error')).color")
               == "rgb(183, 28, 28)", "overview: the last reload error, in red")
        expect("noSuchKey" in browser.evaluate("document.querySelector('#last-error pre').textContent")
               and browser.evaluate("document.querySelectorAll('#last-error b').length") == 0,
               "overview: the error names the key, as text")
        expect(browser.evaluate("document.getElementById('generation').textContent") == "2",
               "overview: generation 2 keeps serving")
        browser.screenshot(os.path.join(args.out, "overview-rejected-1280x800.png"))

        problems = browser.problems()
        if problems:
            raise Failure("the browser reported:\n  " + "\n  ".join(problems))
        print("  ok: no console error, exception, CSP report or failed request")
    finally:
        if browser is not None:
            browser.close()
        compatd.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--compatd", required=True)
    parser.add_argument("--catalog", required=True, help="the embedded catalog's YAML")
    parser.add_argument("--out", required=True, help="directory for the screenshots")
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="compatd-browser-test-")
    try:
        run(args, workdir)
    except Failure as e:
        print("FAIL:", e, file=sys.stderr)
        for log in ("compatd.err", "chromium.log"):
            path = os.path.join(workdir, log)
            if os.path.exists(path):
                with open(path, "rb") as f:
                    tail = f.read()[-3000:].decode("utf-8", "replace")
                print("--- %s (tail)\n%s" % (log, tail), file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print("PASS; screenshots in", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
