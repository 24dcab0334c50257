#!/usr/bin/env python3
"""A phone speaking the gPodder API as AntennaPod does (python3 standard library only), for tests.

It logs in with HTTP Basic authentication on /api/2/auth/{user}/login.json, sending the credentials preemptively
(the server's challenge names no realm), then uses the session cookie alone. Prints JSON answers on stdout.

Usage: gpodder_phone.py --server URL --user U --password P [--device D] COMMAND ...
  subscribe FEED...                     upload the device's subscription of each FEED
  unsubscribe FEED...                   upload their removal
  play PODCAST EPISODE POSITION TOTAL   upload a play action (now, or --timestamp 2026-12-04T20:00:00)
  actions                               print every episode action of the account
  subscriptions DEVICE                  print the device's subscription changes since 0
"""

import argparse
import base64
import datetime
import http.cookiejar
import json
import sys
import urllib.request


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--device", default="phone")
    parser.add_argument("--timestamp", default=None)
    parser.add_argument("command")
    parser.add_argument("arguments", nargs="*")
    arguments = parser.parse_args()

    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    server = arguments.server.rstrip("/")
    user = arguments.user

    def request(method, path, body=None, basic=False):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(server + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if basic:
            token = base64.b64encode(f"{user}:{arguments.password}".encode()).decode()
            req.add_header("Authorization", "Basic " + token)
        with opener.open(req, timeout=30) as response:
            text = response.read().decode()
            return json.loads(text) if text else None

    request("POST", f"/api/2/auth/{user}/login.json", basic=True)
    if not any(True for _ in jar):
        sys.exit("the server set no session cookie at login")

    command = arguments.command
    device = arguments.device
    if command in ("subscribe", "unsubscribe"):
        key = "add" if command == "subscribe" else "remove"
        other = "remove" if key == "add" else "add"
        answer = request(
            "POST", f"/api/2/subscriptions/{user}/{device}.json", {key: arguments.arguments, other: []}
        )
    elif command == "play":
        podcast, episode, position, total = arguments.arguments
        stamp = arguments.timestamp or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
        action = {
            "podcast": podcast,
            "episode": episode,
            "device": device,
            "action": "play",
            "timestamp": stamp,
            "started": 0,
            "position": int(position),
            "total": int(total),
        }
        answer = request("POST", f"/api/2/episodes/{user}.json", [action])
    elif command == "actions":
        answer = request("GET", f"/api/2/episodes/{user}.json?since=0")
    elif command == "subscriptions":
        answer = request("GET", f"/api/2/subscriptions/{user}/{arguments.arguments[0]}.json?since=0")
    else:
        sys.exit(f"unknown command {command}")
    print(json.dumps(answer, sort_keys=True))


if __name__ == "__main__":
    main()
