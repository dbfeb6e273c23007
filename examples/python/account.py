#!/usr/bin/env python3
"""Open a Grundy account and log in for a personal API token, over the
protocol (docs/protocol.md, "Accounts and tokens"): what a third-party bot
does once, before it plays as its account with the token.

    GRUNDY_PASSWORD=... python3 account.py --create my-bot --bot
    GRUNDY_PASSWORD=... python3 account.py --login my-bot --scopes play
    GRUNDY_TOKEN=$(...) python3 random_bot.py --random nim --bot random

The token is printed on standard output, once: keep it secret (it is as good
as the password for what its scopes allow).
"""
import argparse
import asyncio
import json
import os
import sys

# The bot's connection, TLS options included: the two scripts connect alike.
from random_bot import connect, tls_options


async def request(ws, msg):
    await ws.send(json.dumps(msg))
    while True:
        answer = json.loads(await ws.recv())
        if answer.get("id") == msg["id"]:
            if answer["type"] == "error":
                wait = f" (retry in {answer['retry_after_ms']} ms)" if "retry_after_ms" in answer else ""
                raise RuntimeError(f"{answer['code']}: {answer['message']}{wait}")
            return answer


async def run(args, password):
    async with connect(args.server, **tls_options(args.server, args.ca_cert)) as ws:
        await request(ws, {"type": "hello", "id": 1, "version": 1})
        username = args.create or args.login
        if args.create:
            created = await request(ws, {"type": "create_account", "id": 2, "username": username,
                                         "password": password, "kind": "bot" if args.bot else "person"})
            account = created["account"]
            print(f"account {account['username']} ({account['kind']}) opened", file=sys.stderr)
        login = {"type": "login", "id": 3, "username": username, "password": password,
                 "name": args.token_name}
        if args.scopes:
            login["scopes"] = args.scopes.split(",")
        token = await request(ws, login)
        print(f"token {token['info']['id']} with scopes {','.join(token['info']['scopes'])}",
              file=sys.stderr)
        print(token["token"])


def main():
    p = argparse.ArgumentParser(description="Open a Grundy account and log in for a token.")
    p.add_argument("--server", default="ws://127.0.0.1:7878")
    p.add_argument("--ca-cert", metavar="FILE", default=os.environ.get("GRUNDY_CA_CERT"),
                   help="for a wss:// server with a private CA: its certificate, PEM "
                        "(default: $GRUNDY_CA_CERT)")
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--create", metavar="USERNAME", help="open this account, then log in")
    who.add_argument("--login", metavar="USERNAME", help="log in to this account")
    p.add_argument("--bot", action="store_true", help="with --create: a bot's account")
    p.add_argument("--scopes", help="the token's scopes, e.g. play,tournaments (default: all)")
    p.add_argument("--token-name", default="account.py", help="a name for the token")
    args = p.parse_args()
    password = os.environ.get("GRUNDY_PASSWORD")
    if not password:
        print("set GRUNDY_PASSWORD (kept out of the command line, where others can read it)",
              file=sys.stderr)
        return 1
    try:
        asyncio.run(run(args, password))
    except RuntimeError as err:
        print(f"failed: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
