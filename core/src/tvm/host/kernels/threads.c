/* How many OpenMP threads a parallel loop of the host target runs on.
 *
 * OpenMP's number (OMP_NUM_THREADS, else one per CPU), less one for every CPU that other
 * programs keep busy: the runnable tasks of the whole machine (the fourth field of
 * /proc/loadavg) less the runnable threads of this process (state R in
 * /proc/self/task/<tid>/stat), sampled at most every quarter of a second. On a shared machine a
 * thread of ours that waits in a run queue holds up the loop's end for every other thread (a
 * time slice, milliseconds); on an idle machine every thread is used.
 *
 * Our own runnable threads are counted, not assumed: OpenMP's workers spin for a while after a
 * loop and then sleep, so between two calls anywhere from one to all of them are runnable. (The
 * first version subtracted all of them; with a sleeping team, one other busy program on two
 * CPUs then read as none, and both threads ran, one of them sharing a CPU.) Elsewhere than
 * Linux: OpenMP's number. The target's num_threads (a fixed count) bypasses this.
 */
#include <dirent.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#ifndef TVM_HOST_LOADAVG
#define TVM_HOST_LOADAVG "/proc/loadavg" /* a test compiles it with a file of its own */
#endif

/* The threads of this process in state R, or -1 when /proc cannot tell. */
static int tvm_host_own_running(void) {
  DIR* dir = opendir("/proc/self/task");
  if (dir == NULL) return -1;
  int n = 0;
  struct dirent* e;
  while ((e = readdir(dir)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%.20s/stat", e->d_name);
    FILE* f = fopen(path, "r");
    if (f == NULL) continue;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    const char* end = strrchr(buf, ')');  /* the thread's name may hold spaces and ')' */
    if (end != NULL && end[1] == ' ' && end[2] == 'R') n++;
  }
  closedir(dir);
  return n;
}

static int tvm_host_threads(void) {
  static int cached = 0;
  static long long stamp = -1;
  const int max = omp_get_max_threads();
  struct timespec ts;
  if (max <= 1 || clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return max < 1 ? 1 : max;
  const long long now = (long long)ts.tv_sec * 4 + ts.tv_nsec / 250000000;
  if (__atomic_load_n(&stamp, __ATOMIC_RELAXED) == now) {
    const int c = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (c > 0) return c;
  }
  int n = max;
  FILE* f = fopen(TVM_HOST_LOADAVG, "r");
  if (f != NULL) {
    double l1, l5, l15;
    int running = 0, total = 0;
    const int ok = fscanf(f, "%lf %lf %lf %d/%d", &l1, &l5, &l15, &running, &total) == 5;
    fclose(f);
    const int own = ok ? tvm_host_own_running() : -1;
    if (own >= 0) {
      const int others = running - (own > 0 ? own : 1);  /* this thread is running */
      if (others > 0) n = omp_get_num_procs() - others;
      if (n < 1) n = 1;
      if (n > max) n = max;
    }
  }
  __atomic_store_n(&cached, n, __ATOMIC_RELAXED);
  __atomic_store_n(&stamp, now, __ATOMIC_RELAXED);
  return n;
}
