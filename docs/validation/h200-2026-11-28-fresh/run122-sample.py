# Samples the kernel stacks and states of a process's io-wq workers (iou-wrk-<owner tid>) every ~2 ms
# until the process exits; prints, per 1 s window and per owner kind, state counts and the top frames.
import os, sys, time, collections
pid = int(sys.argv[1]); out = open(sys.argv[2], "w")
t0 = time.time(); owners = {}
win = collections.defaultdict(collections.Counter)
def comm(tid):
    try: return open(f"/proc/{pid}/task/{tid}/comm").read().strip()
    except Exception: return "?"
SKIP = ("schedule", "__schedule", "io_wq_worker", "ret_from_fork", "io_worker_handle_work", "io_wq_submit_work", "io_issue_sqe", "entry_SYSCALL", "do_syscall", "__x64_sys", "io_write", "ext4_buffered_write_iter", "ext4_file_write_iter", "generic_perform_write")
while os.path.exists(f"/proc/{pid}"):
    now = time.time() - t0; w = int(now)
    try: tids = os.listdir(f"/proc/{pid}/task")
    except Exception: break
    for tid in tids:
        c = comm(tid)
        if not c.startswith("iou-wrk-"): continue
        o = c[8:]
        if o not in owners: owners[o] = comm(o)
        kind = owners[o].split("-")[0] + "-" + (owners[o].split("-")[1] if "-" in owners[o] else "")
        try:
            st = open(f"/proc/{pid}/task/{tid}/stat").read().rsplit(")", 1)[1].split()[0]
            stack = [l.split("] ", 1)[1].split("+")[0] for l in open(f"/proc/{pid}/task/{tid}/stack").read().splitlines() if "] " in l]
        except Exception:
            continue
        frames = [f for f in stack if not f.startswith(SKIP)][:3]
        win[(w, kind)][(st, " < ".join(frames) or "-")] += 1
    time.sleep(0.002)
for (w, kind), cnt in sorted(win.items()):
    tot = sum(cnt.values())
    out.write(f"== t={w}s {kind} samples={tot}\n")
    for (st, fr), n in cnt.most_common(6):
        out.write(f"   {n:6d} {100*n/tot:5.1f}% {st} {fr}\n")
out.close()
