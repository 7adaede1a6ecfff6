/* How many OpenMP threads a parallel loop of the host target runs on.
 *
 * OpenMP's number (OMP_NUM_THREADS, else one per CPU), less one for every runnable task of
 * other programs beyond our own threads (Linux's count of runnable tasks, the fourth field of
 * /proc/loadavg, read at most every quarter of a second). On a shared machine a thread of ours
 * that waits in a run queue holds up the loop's end for every other thread (a time slice,
 * milliseconds); on an idle machine every thread is used. Elsewhere than Linux: OpenMP's
 * number. The target's num_threads (a fixed count) bypasses this.
 */
#include <omp.h>
#include <time.h>

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
  FILE* f = fopen("/proc/loadavg", "r");
  if (f != NULL) {
    double l1, l5, l15;
    int running = 0, total = 0;
    if (fscanf(f, "%lf %lf %lf %d/%d", &l1, &l5, &l15, &running, &total) == 5) {
      const int others = running - max;  /* all of our threads may be among the runnable */
      if (others > 0) n = omp_get_num_procs() - others;
      if (n < 1) n = 1;
      if (n > max) n = max;
    }
    fclose(f);
  }
  __atomic_store_n(&cached, n, __ATOMIC_RELAXED);
  __atomic_store_n(&stamp, now, __ATOMIC_RELAXED);
  return n;
}
