/* How the way a program reads a PTY changes how fast the child writing into it runs
 * (docs/PERFORMANCE.md, "On a quiet machine: behind tmux on the flood" and the sections
 * after it). Runs a command in a 200x50 PTY, reads everything it writes in one of six ways,
 * and prints the wall time until EOF, the number of reads and their mean size:
 *   block              a read loop, blocked in read() whenever nothing is waiting
 *   pause US           the same, sleeping US microseconds after every read (timer slack 1 us)
 *   spin US            the same, busy for US microseconds after every read
 *   consumer NS        a reader thread handing each chunk to a consumer thread that works
 *                      NS nanoseconds per byte (xstack's shape: 11 ns is what its pipeline
 *                      spends on the flood); with NAP_US set in the environment the
 *                      consumer sleeps that long whenever it has drained its queue (which
 *                      then holds up to 1024 chunks instead of 16)
 *   drain US           reads until nothing is waiting (non-blocking), then sleeps US
 *                      microseconds, or blocks in poll() when that drain found nothing
 *   inline NS          one thread that reads and then itself works NS nanoseconds per byte
 *                      of what it read before reading again (tmux's shape)
 * All threads are SCHED_BATCH, as xstack's are; the child is not.
 * Build: gcc -O2 -pthread -o /tmp/pty_reader_model scripts/pty_reader_model.c -lutil
 * Run:   /tmp/pty_reader_model consumer 11 python3 gen.py
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static void busy(double seconds) {
  double end = now() + seconds;
  while (now() < end) {
  }
}

static void batch(void) {
  struct sched_param param = {0};
  sched_setscheduler(0, SCHED_BATCH, &param);
}

#define QUEUE 1024
static char *queued[QUEUE];
static long queued_len[QUEUE];
static int head, tail, finished;
static double ns_per_byte;
static long nap_us;
static long queue_limit = 16;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;

static void *consume(void *unused) {
  (void)unused;
  batch();
  for (;;) {
    pthread_mutex_lock(&lock);
    while (head == tail && !finished) pthread_cond_wait(&not_empty, &lock);
    if (head == tail) {
      pthread_mutex_unlock(&lock);
      return NULL;
    }
    char *chunk = queued[head % QUEUE];
    long len = queued_len[head % QUEUE];
    head++;
    pthread_cond_signal(&not_full);
    pthread_mutex_unlock(&lock);
    busy(len * ns_per_byte * 1e-9);
    free(chunk);
    if (nap_us) {
      pthread_mutex_lock(&lock);
      int drained = head == tail;
      pthread_mutex_unlock(&lock);
      if (drained) {
        struct timespec nap = {nap_us / 1000000, (nap_us % 1000000) * 1000};
        nanosleep(&nap, NULL);
      }
    }
  }
}

static void hand_over(const char *buf, long len) {
  char *chunk = malloc(len);
  if (!chunk) exit(1);
  memcpy(chunk, buf, len);
  pthread_mutex_lock(&lock);
  while (tail - head >= queue_limit) pthread_cond_wait(&not_full, &lock);
  queued[tail % QUEUE] = chunk;
  queued_len[tail % QUEUE] = len;
  tail++;
  pthread_cond_signal(&not_empty);
  pthread_mutex_unlock(&lock);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s block|pause US|spin US|consumer NS|drain US|inline NS COMMAND...\n",
            argv[0]);
    return 2;
  }
  const char *mode = argv[1];
  int has_arg = strcmp(mode, "block") != 0;
  double arg = has_arg ? atof(argv[2]) : 0;
  char **command = argv + (has_arg ? 3 : 2);
  if (!*command) {
    fprintf(stderr, "no command\n");
    return 2;
  }
  int master;
  struct winsize size = {50, 200, 0, 0};
  pid_t child = forkpty(&master, NULL, NULL, &size);
  if (child < 0) {
    perror("forkpty");
    return 1;
  }
  if (child == 0) {
    execvp(command[0], command);
    _exit(127);
  }
  batch();
  prctl(PR_SET_TIMERSLACK, 1000, 0, 0, 0);
  pthread_t consumer;
  if (getenv("NAP_US")) {
    nap_us = atol(getenv("NAP_US"));
    queue_limit = QUEUE;
  }
  if (strcmp(mode, "consumer") == 0) {
    ns_per_byte = arg;
    pthread_create(&consumer, NULL, consume, NULL);
  }
  static char buf[65536];
  long reads = 0, bytes = 0, wakes = 0;
  double start = now();
  int draining = strcmp(mode, "drain") == 0;
  if (draining) {
    fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
    int open = 1;
    while (open) {
      long got = 0;
      for (;;) {
        ssize_t n = read(master, buf, sizeof buf);
        if (n > 0) {
          reads++;
          bytes += n;
          got += n;
          continue;
        }
        if (n < 0 && errno == EAGAIN) break;
        open = 0;
        break;
      }
      wakes++;
      if (!open) break;
      if (got) {
        struct timespec pause = {0, (long)(arg * 1000)};
        nanosleep(&pause, NULL);
      } else {
        struct pollfd fd = {master, POLLIN, 0};
        poll(&fd, 1, -1);
      }
    }
  }
  while (!draining) {
    ssize_t n = read(master, buf, sizeof buf);
    if (n <= 0) break;
    reads++;
    bytes += n;
    if (strcmp(mode, "pause") == 0) {
      struct timespec pause = {0, (long)(arg * 1000)};
      nanosleep(&pause, NULL);
    } else if (strcmp(mode, "spin") == 0) {
      busy(arg * 1e-6);
    } else if (strcmp(mode, "inline") == 0) {
      busy(n * arg * 1e-9);
    } else if (strcmp(mode, "consumer") == 0) {
      hand_over(buf, n);
    }
  }
  if (strcmp(mode, "consumer") == 0) {
    pthread_mutex_lock(&lock);
    finished = 1;
    pthread_cond_signal(&not_empty);
    pthread_mutex_unlock(&lock);
    pthread_join(consumer, NULL);
  }
  double wall = now() - start;
  int status;
  waitpid(child, &status, 0);
  printf("%s %s wall %.3f s, %ld reads of %ld bytes on average, %ld wake-ups\n", mode,
         has_arg ? argv[2] : "-", wall, reads, reads ? bytes / reads : 0, wakes ? wakes : reads);
  return 0;
}
