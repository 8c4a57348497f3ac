#!/usr/bin/env python3
"""Send one request line to ppctld's JSON API and print the reply line.

  ppctld-api.py '{"cmd":"status"}' [SOCKET]        (default /run/ppctld/ppctld.sock)
  ppctld-api.py '{"cmd":"status"}' --field pools   print one top-level field
"""
import json
import socket
import sys

args = sys.argv[1:]
field = None
if '--field' in args:
    i = args.index('--field')
    field = args[i + 1]
    del args[i:i + 2]
if not args:
    sys.exit(__doc__)
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(args[1] if len(args) > 1 else '/run/ppctld/ppctld.sock')
s.sendall(args[0].encode() + b'\n')
buf = b''
while not buf.endswith(b'\n'):
    d = s.recv(65536)
    if not d:
        break
    buf += d
print(json.loads(buf)[field] if field else buf.decode().strip())
