# One thread pwrites 1 MiB chunks into a fresh file, several rounds, each file
# unlinked after: does the first round (fresh guest memory) run slower?
import os, sys, time
gib = int(sys.argv[1]) if len(sys.argv) > 1 else 4
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 4
buf = b'\x5a' * (1 << 20)
for k in range(rounds):
    path = f'/tmp/touch{k}.bin'
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    t, c = time.time(), os.times()
    for i in range(gib * 1024):
        os.pwrite(fd, buf, i << 20)
    dt = time.time() - t
    c2 = os.times()
    cpu = (c2.user - c.user) + (c2.system - c.system)
    print(f'round {k}: {gib} GiB in {dt:.3f} s = {gib * 1.073741824 / dt:.2f} GB/s, cpu {cpu:.2f} s ({cpu / (gib * 1.073741824):.3f} s/GB)', flush=True)
    os.close(fd)
    os.unlink(path)
