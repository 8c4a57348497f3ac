#!/usr/bin/python3
"""A socket that never reads, for the lab (tests/lab/holders.sh, checks.sh's
hold_sock).

  holders-sock.py udp ADDR PORT [MIB]    bound UDP socket, MIB (default 8) MiB
                                         receive buffer (SO_RCVBUFFORCE)
  holders-sock.py tcp-server ADDR PORT   accepts one connection, never reads
  holders-sock.py tcp-client ADDR PORT N connects, sends N writes of 1000
                                         bytes (TCP_NODELAY), stays open

Prints "ready" (the server once it listens, the client once it has sent)
and then waits for a signal.
"""
import signal
import socket
import sys

SO_RCVBUFFORCE = 33


def main():
    mode, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    keep = []
    if mode == 'udp':
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        mib = int(sys.argv[4]) if len(sys.argv) > 4 else 8
        s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, mib << 20)
        s.bind((addr, port))
        keep.append(s)
        print('ready', flush=True)
    elif mode == 'tcp-server':
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20)
        s.bind((addr, port))
        s.listen(1)
        print('ready', flush=True)
        c, _ = s.accept()
        keep += [s, c]
    elif mode == 'tcp-client':
        s = socket.create_connection((addr, port), timeout=30)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for _ in range(int(sys.argv[4])):
            s.sendall(b'x' * 1000)
        keep.append(s)
        print('ready', flush=True)
    else:
        sys.exit(f'holders-sock.py: unknown mode {mode}')
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        signal.pause()


if __name__ == '__main__':
    main()
