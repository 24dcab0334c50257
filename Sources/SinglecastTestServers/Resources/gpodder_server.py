#!/usr/bin/env python3
"""Runs the gpodder-fastapi-router app (a gpodder.net API server from PyPI) under uvicorn for tests.

Run it with the python of the venv scripts/bootstrap creates (gpodder-fastapi-router, uvicorn, aiosqlite).
Creates a temporary SQLite database and the user --user with password --password, listens on 127.0.0.1 on a
free port and prints that port on stdout once the app answers. It stops when stdin reaches EOF (the test that
started it went away) or after --lifetime seconds, whichever comes first. Requests are appended to --log, one
"METHOD path?query status" line each.
"""

import argparse
import asyncio
import os
import socket
import sys
import tempfile
import threading
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lifetime", type=int, default=600)
    parser.add_argument("--user", default="phone-owner")
    parser.add_argument("--password", default="secret")
    parser.add_argument("--log", default=None)
    arguments = parser.parse_args()

    directory = tempfile.mkdtemp(prefix="singlecast-gpodder-")
    database = "sqlite+aiosqlite:///" + os.path.join(directory, "gpodder.db")
    os.environ["GPODDER_DATABASE_URL"] = database
    # Few bcrypt rounds: the API checks the password of every Basic-authenticated request.
    os.environ["GPODDER_BCRYPT_ROUNDS"] = "4"

    from fastapi import FastAPI, Request
    import uvicorn
    from gpodder_router import GPodderConfig, attach
    from gpodder_router.db import Database
    from gpodder_router.services import users

    config = GPodderConfig(database_url=database, bcrypt_rounds=4, enable_dashboard=False)

    async def create_user():
        db = Database(database)
        await db.create_all()
        async with db.session() as session:
            await users.create_user(
                session, username=arguments.user, password=arguments.password, email=None, bcrypt_rounds=4
            )
        await db.dispose()

    asyncio.run(create_user())

    app = FastAPI()
    attach(app, config=config)

    if arguments.log:
        lock = threading.Lock()

        @app.middleware("http")
        async def log_requests(request: Request, call_next):
            response = await call_next(request)
            query = "?" + request.url.query if request.url.query else ""
            with lock, open(arguments.log, "a") as log:
                log.write(f"{request.method} {request.url.path}{query} {response.status_code}\n")
            return response

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))

    def announce():
        # The port is printed once the server accepts: the test starts using it at once.
        while not server.started:
            time.sleep(0.02)
        sys.stdout.write(f"{port}\n")
        sys.stdout.flush()

    def watch_stdin():
        try:
            while sys.stdin.buffer.read(1):
                pass
        finally:
            server.should_exit = True

    def expire():
        time.sleep(arguments.lifetime)
        server.should_exit = True

    for target in (announce, watch_stdin, expire):
        threading.Thread(target=target, daemon=True).start()
    server.run(sockets=[listener])


if __name__ == "__main__":
    main()
