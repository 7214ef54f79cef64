// N threads pwrite 1 MiB chunks at disjoint offsets of one fresh (sized, sparse) file,
// buffers spread over 512 MiB: GB/s for each N. Shows what concurrent writers of one
// ext4 file cost against one writer. Also: N threads each writing its own file.
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#define CH (1u << 20)
#define TOTAL 4224ull
static char *bufs; static int nthr; static int fds[64]; static int perfile;
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static void *w(void *a) {
  long id = (long)a;
  for (unsigned long long i = id; i < TOTAL; i += nthr) {
    int fd = perfile ? fds[id] : fds[0];
    if (pwrite(fd, bufs + (i % 512) * CH, CH, i * CH) != CH) { perror("pwrite"); exit(1); }
  }
  return 0;
}
int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "/tmp";
  bufs = malloc(512ull * CH); memset(bufs, 0x5a, 512ull * CH);
  int ns[] = {1, 2, 4, 8, 16, 1, 16};
  for (int pf = 0; pf < 2; pf++)
  for (unsigned k = 0; k < sizeof ns / sizeof *ns; k++) {
    nthr = ns[k]; perfile = pf;
    char p[256];
    for (int f = 0; f < (pf ? nthr : 1); f++) {
      snprintf(p, sizeof p, "%s/contend-%d", dir, f);
      unlink(p); fds[f] = open(p, O_CREAT | O_RDWR | O_TRUNC, 0644);
      if (ftruncate(fds[f], TOTAL * CH)) { perror("ftruncate"); return 1; }
    }
    pthread_t t[64]; double t0 = now();
    for (long i = 0; i < nthr; i++) pthread_create(&t[i], 0, w, (void *)i);
    for (int i = 0; i < nthr; i++) pthread_join(t[i], 0);
    double s = now() - t0;
    printf("%s, %2d writers: %.2f GB/s\n", pf ? "a file per writer" : "one file", nthr, TOTAL * CH / s / 1e9);
    fflush(stdout);
    for (int f = 0; f < (pf ? nthr : 1); f++) { close(fds[f]); snprintf(p, sizeof p, "%s/contend-%d", dir, f); unlink(p); }
  }
  return 0;
}
