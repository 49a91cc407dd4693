#!/usr/bin/env python3
# A webhook for the gateway's approval tests (tests/gateway/test_webhook*.sh,
# issue 38), on loopback: POST /grant, /deny, /later (not before an hour
# from now, RFC 3339 with an offset), /hang (answers after 30 s: never, for
# a deadline of 2 s); each ask's path and body appended to ASKS_LOG.
# usage: webhook_server.py PORT_FILE ASKS_LOG  (PORT_FILE gets the port)
import datetime, http.server, json, sys, time
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with open(sys.argv[2], "a") as f:
            f.write(self.path + " " + body.decode() .strip() + "\n")
        if self.path == "/hang":
            time.sleep(30)
        answer = {"decision": "grant" if self.path == "/grant" else "deny",
                  "message": "from the test's webhook"}
        if self.path == "/later":
            at = datetime.datetime.now(datetime.timezone(datetime.timedelta(hours=2)))
            answer = {"decision": "notBefore",
                      "notBefore": (at + datetime.timedelta(hours=1)).isoformat()}
        out = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
s.daemon_threads = True
open(sys.argv[1], "w").write(str(s.server_address[1]))
s.serve_forever()
