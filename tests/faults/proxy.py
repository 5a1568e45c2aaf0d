"""A TCP proxy between a front-end and the database that a test steers:
pass bytes through, hold them (a blackhole: connections are accepted, and
nothing is forwarded until the fault ends), or reset every connection."""

import select
import socket
import struct
import threading


class Proxy:
    def __init__(self, target_port, target_host="127.0.0.1"):
        self.target = (target_host, target_port)
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(128)
        self.port = self.listener.getsockname()[1]
        self.blackhole = threading.Event()
        self.closing = threading.Event()
        self.lock = threading.Lock()
        self.pairs = []
        self.accepted = 0
        self.generation = 0
        self.armed = None           # (direction, bytes) of a one-shot reset
        self.fired = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.closing.is_set():
            try:
                r, _, _ = select.select([self.listener], [], [], 0.1)
                if not r:
                    continue
                client, _ = self.listener.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client):
        # While blackholed, an accepted connection is not even forwarded.
        while self.blackhole.is_set() and not self.closing.is_set():
            self.blackhole_wait()
        try:
            upstream = socket.create_connection(self.target, timeout=5)
        except OSError:
            client.close()
            return
        upstream.settimeout(None)
        pair = (client, upstream)
        with self.lock:
            self.pairs.append(pair)
        generation = self.generation
        sent_up = 0
        held = {client: b"", upstream: b""}
        other = {client: upstream, upstream: client}
        try:
            while not self.closing.is_set():
                if self.generation != generation:
                    for s in pair:
                        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    return
                r, _, _ = select.select([client, upstream], [], [], 0.05)
                for s in r:
                    data = s.recv(65536)
                    if not data:
                        return
                    held[s] += data
                if not self.blackhole.is_set():
                    if self._cut(sent_up + len(held[client]), bool(held[upstream])):
                        for s in pair:
                            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                        return
                    sent_up += len(held[client])
                    if held[upstream]:
                        sent_up = 0     # an answer: the next bytes up are a new request
                    for s in (client, upstream):
                        if held[s]:
                            other[s].sendall(held[s])
                            held[s] = b""
        except OSError:
            return
        finally:
            with self.lock:
                if pair in self.pairs:
                    self.pairs.remove(pair)
            for s in pair:
                try:
                    s.close()
                except OSError:
                    pass

    def arm(self, direction, after_bytes):
        """One reset, of the first connection that has sent more than
        `after_bytes` to the database: before forwarding them ("up": the
        request is cut mid-way) or at the database's first answer after them
        ("down": the request ran, its answer is lost)."""
        with self.lock:
            self.armed = (direction, after_bytes)

    def _cut(self, up_total, answer_waiting):
        with self.lock:
            if self.armed is None:
                return False
            direction, after = self.armed
            if up_total <= after or (direction == "down" and not answer_waiting):
                return False
            self.armed = None
            self.fired += 1
            return True

    def blackhole_wait(self):
        self.closing.wait(0.05)

    def reset_all(self):
        """Resets every open connection: each is closed with an RST on both
        sides within 50 ms. Answers how many there were."""
        with self.lock:
            n = len(self.pairs)
            self.generation += 1
        return n

    def close(self):
        self.closing.set()
        self.reset_all()
        self.listener.close()
