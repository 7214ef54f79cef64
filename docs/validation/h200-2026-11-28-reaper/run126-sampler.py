# Prints, every 0.5 s, the CPU seconds each thread of interest used in that interval
# (kernel threads iou-sqp-*/iou-wrk-* and the gpuio process's threads).
import os, sys, time
HZ = os.sysconf("SC_CLK_TCK"); out = open(sys.argv[1], "w"); dur = float(sys.argv[2])
prev = {}; t0 = time.time()
while time.time() - t0 < dur:
    cur = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit(): continue
        try: tids = os.listdir(f"/proc/{pid}/task")
        except Exception: continue
        for tid in tids:
            try:
                s = open(f"/proc/{pid}/task/{tid}/stat").read()
                comm = s[s.index("(")+1:s.rindex(")")]
                f = s[s.rindex(")")+2:].split()
                if not (comm.startswith("iou-") or comm.startswith("gpuio") or comm.startswith("fwd") or comm.startswith("waker")):
                    continue
                cur[(pid, tid, comm)] = (int(f[11]) + int(f[12])) / HZ
            except Exception: pass
    line = []
    for k, v in cur.items():
        d = v - prev.get(k, v if k not in prev else 0)
        if k in prev and d > 0.02: line.append(f"{k[2]}:{d:.2f}")
    out.write(f"t={time.time()-t0:.1f} " + " ".join(sorted(line)) + "\n"); out.flush()
    prev = cur; time.sleep(0.5)
