#!/usr/bin/env python3
"""Used by tests/net/run: connects to a rank's TCP port as a stranger, twice: once with
garbage, once with a well-formed greeting followed by a proof made without the secret.
Usage: stranger.py HOST PORT"""
import os
import socket
import struct
import sys

host, port = sys.argv[1], int(sys.argv[2])

s = socket.create_connection((host, port), timeout=5)
s.sendall(b"GET / HTTP/1.0\r\n\r\n" + b"x" * 20)
try:
    s.recv(100)
except OSError:
    pass
s.close()

s = socket.create_connection((host, port), timeout=5)
s.sendall(b"OXMPI-T1" + struct.pack("<II", 1, 0) + os.urandom(16))
challenge = b""
while len(challenge) < 56:
    chunk = s.recv(56 - len(challenge))
    if not chunk:
        break
    challenge += chunk
s.sendall(os.urandom(32))
try:
    s.recv(100)
except OSError:
    pass
s.close()
print("stranger done")
