import sys,re
# prints forward pwrite figures: name, GB/s, ratio, cpu s/GB, workers
for f in sys.argv[1:]:
    t=open(f).read().split('\n'); print('##', f.split('/')[-1])
    for i,l in enumerate(t):
        m=re.match(r'\s+forward: 1 MiB pwrite(.*?)\s{2,}([0-9.]+) GB/s.*?\(([0-9.]+)x',l)
        if m:
            cpu=''
            for k in range(i+1,min(i+12,len(t))):
                c=re.search(r'host CPU \(user \+ system\): ([0-9.]+) s per GB.*?io-wq workers \(([0-9]+) of them; ([0-9.]+) cores',t[k])
                if c: cpu='cpu %s s/GB, %s workers, %s cores'%c.groups(); break
            name=m.group(1).replace(', whole device','').replace(' from the staging area (no copy from device memory)',' staged')
            print('  %-40s %6s GB/s %6sx  %s'%(name.strip(),m.group(2),m.group(3),cpu))
