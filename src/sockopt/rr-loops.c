/*
 * The request/response loops of a blocking TCP_RR stream, compiled at run time by bun:ffi's cc (TinyCC): one call
 * per slice of transactions instead of two FFI calls and a JavaScript callback per transaction. Each loop handles
 * only the plain case (whole requests, whole responses) and hands anything else back to the caller's JavaScript.
 * No headers: TinyCC inside the binary has no system include path, so the few libc declarations are spelled out.
 */
typedef long ssize_t;
typedef unsigned long size_t;
struct timespec {
  long tv_sec;
  long tv_nsec;
};
extern ssize_t recv(int fd, void *buf, size_t len, int flags);
extern ssize_t send(int fd, const void *buf, size_t len, int flags);
extern int clock_gettime(int clock, struct timespec *ts);
extern int *__errno_location(void);
extern int socket(int domain, int type, int protocol);
extern int setsockopt(int fd, int level, int name, const void *value, unsigned len);
extern int connect(int fd, const void *addr, unsigned len);
extern int accept4(int fd, void *addr, void *len, int flags);
extern int close(int fd);

#define MSG_NOSIGNAL 0x4000
#define CLOCK_MONOTONIC 1
#define EAGAIN 11
#define EINTR 4
#define SOCK_STREAM 1
#define SOCK_CLOEXEC 02000000
#define SOL_SOCKET 1
#define SO_RCVTIMEO 20
#define SO_SNDTIMEO 21

/* How a loop ended; `out` says how far it got. */
#define END_SLICE 0   /* its time was used up */
#define END_TIMEOUT 1 /* a wait passed SO_RCVTIMEO with nothing read */
#define END_EOF 2
#define END_ERROR 3
#define END_ODD 4     /* a read that is not exactly one whole request (response): out[2] bytes are in buf, uncounted */
#define END_PARTIAL 5 /* a send the kernel took only out[2] bytes of (negative: it failed) */

/* Reads between looks at the clock: a look costs about as much as the loop's own work. */
#define CLOCK_EVERY 4

/*
 * The stream's counters are its block of the shared counters (`c`, counters.ts) and its latency histogram (`hist`,
 * histogram.ts), written per transaction as the JavaScript runners write them, so a cut at any instant sees every
 * transaction done. `slot` holds the Slot numbers, in this order:
 */
enum { S_TRANSACTIONS, S_BYTES, S_LATENCY_SUM, S_LATENCY_MIN, S_LATENCY_MAX, S_CONNECTIONS, S_CLOSED, S_SEND_ERRORS, S_TIMED, S_LATENCY_SQ };

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int ended(ssize_t n) {
  if (n == 0) return END_EOF;
  int e = *__errno_location();
  return e == EAGAIN || e == EINTR ? END_TIMEOUT : END_ERROR;
}

/* histogram.ts's bucketOf: units of 1/32 µs, 64 buckets per power of two above 128 units, 2048 buckets. */
static int bucket_of(double us) {
  double v = us * 32.0;
  if (!(v >= 0)) return 0;
  if (v >= 137438953472.0) return 2047; /* 2^37 units: beyond the last band */
  unsigned long n = (unsigned long)v;
  int msb = -1;
  for (unsigned long m = n; m; m >>= 1) msb++;
  int k = msb - 6;
  if (k < 0) k = 0;
  if (k > 30) return 2047;
  return (k << 6) + (int)(n >> k);
}

/* StreamContext.latency after one more transaction. */
static void timed(double *c, const int *slot, unsigned *hist, double us) {
  c[slot[S_TRANSACTIONS]] += 1;
  c[slot[S_TIMED]] += 1;
  c[slot[S_LATENCY_SUM]] += us;
  c[slot[S_LATENCY_SQ]] += us * us;
  if (us < c[slot[S_LATENCY_MIN]] || c[slot[S_LATENCY_MIN]] == 0) c[slot[S_LATENCY_MIN]] = us;
  if (us > c[slot[S_LATENCY_MAX]]) c[slot[S_LATENCY_MAX]] = us;
  hist[bucket_of(us)]++;
}

/* Server: read a request, answer it, for `slice_us`. out[0] = transactions, out[2]: see END_ODD and END_PARTIAL. */
int rr_serve(int fd, unsigned char *buf, long buf_len, long request, const unsigned char *response, long response_len, double slice_us, double *c, const int *slot, double *out) {
  double end = now_us() + slice_us;
  for (long reads = 1;; reads++) {
    ssize_t n = recv(fd, buf, buf_len, 0);
    if (n <= 0) return ended(n);
    if (n != request) {
      out[2] = (double)n;
      return END_ODD;
    }
    c[slot[S_TRANSACTIONS]] += 1;
    out[0] += 1;
    ssize_t w = send(fd, response, response_len, MSG_NOSIGNAL);
    c[slot[S_BYTES]] += (double)n + (w > 0 ? (double)w : 0);
    if (w != response_len) {
      out[2] = (double)w;
      return END_PARTIAL;
    }
    if (reads % CLOCK_EVERY == 0 && now_us() > end) return END_SLICE;
  }
}

/*
 * Client, one transaction in flight: its request went out at out[3] (µs on this clock). Read the response, time it,
 * send the next request (stamped with the same clock read), for `slice_us`. out[0] = transactions, out[2]: see
 * END_ODD and END_PARTIAL, out[3] = when the request now in flight went out.
 */
int rr_client(int fd, unsigned char *buf, long buf_len, const unsigned char *request, long request_len, long response, double slice_us, double *c, const int *slot, unsigned *hist, double *out) {
  double end = now_us() + slice_us;
  for (;;) {
    ssize_t n = recv(fd, buf, buf_len, 0);
    if (n <= 0) return ended(n);
    if (n != response) {
      out[2] = (double)n;
      return END_ODD;
    }
    double now = now_us();
    c[slot[S_BYTES]] += (double)n;
    timed(c, slot, hist, now - out[3]);
    out[0] += 1;
    out[3] = now;
    ssize_t w = send(fd, request, request_len, MSG_NOSIGNAL);
    if (w > 0) c[slot[S_BYTES]] += (double)w;
    if (w != request_len) {
      out[2] = (double)w;
      return END_PARTIAL;
    }
    if (now > end) return END_SLICE;
  }
}

/*
 * TCP_CRR client: per transaction a socket bounded by `bounds` (struct timeval, for connect and every wait), connect
 * to `addr`, the whole request, the whole response, close; for `slice_us`. out[0] = transactions. END_ERROR: a
 * socket or connect failed (counted as a send error): the caller yields before the next.
 */
int crr_client(int family, const unsigned char *addr, long addr_len, const void *bounds, const unsigned char *request, long request_len, long response, unsigned char *buf, long buf_len, double slice_us, double *c, const int *slot, unsigned *hist, double *out) {
  double end = now_us() + slice_us;
  for (;;) {
    double start = now_us();
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, bounds, 16) != 0 || setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, bounds, 16) != 0 || connect(fd, addr, addr_len) != 0)) {
      close(fd);
      fd = -1;
    }
    if (fd < 0) {
      c[slot[S_SEND_ERRORS]] += 1;
      return END_ERROR;
    }
    c[slot[S_CONNECTIONS]] += 1;
    int ok = 1;
    for (long off = 0; ok && off < request_len;) {
      ssize_t w = send(fd, request + off, request_len - off, MSG_NOSIGNAL);
      if (w < 0) ok = 0;
      else off += w;
    }
    if (ok) c[slot[S_BYTES]] += (double)request_len;
    /* The server closes after its response, so its FIN is here or on its way: no read of it before our close. */
    long got = 0;
    while (ok && got < response) {
      ssize_t n = recv(fd, buf, buf_len, 0);
      if (n > 0) got += n;
      else ok = 0;
    }
    c[slot[S_BYTES]] += (double)got;
    close(fd);
    c[slot[S_CLOSED]] += 1;
    double now = now_us();
    if (got >= response) {
      timed(c, slot, hist, now - start);
      out[0] += 1;
    } else c[slot[S_SEND_ERRORS]] += 1;
    if (now > end) return END_SLICE;
  }
}

/*
 * TCP_CRR server on a blocking listener whose bounds accepted sockets inherit: accept, one whole request, its whole
 * response, close, for `slice_us`. out[0] = transactions, out[2] = connections accepted (each closed here unless
 * handed back). A connection out of the plain is handed back open: END_ODD with its fd in out[3] and what its read
 * returned in out[4] (bytes in buf, uncounted; 0 at EOF; -errno), or END_PARTIAL with its fd in out[3] and the
 * response bytes sent in out[4] (its transaction counted). END_TIMEOUT: nothing to accept within the bound;
 * END_ERROR: accept failed with errno out[3].
 */
int crr_serve(int lfd, unsigned char *buf, long buf_len, long request, const unsigned char *response, long response_len, double slice_us, double *c, const int *slot, double *out) {
  double end = now_us() + slice_us;
  for (;;) {
    int fd = accept4(lfd, 0, 0, SOCK_CLOEXEC);
    if (fd < 0) {
      int e = *__errno_location();
      if (e == EAGAIN || e == EINTR) return END_TIMEOUT;
      out[3] = (double)e;
      return END_ERROR;
    }
    c[slot[S_CONNECTIONS]] += 1;
    out[2] += 1;
    ssize_t n = recv(fd, buf, buf_len, 0);
    if (n != request) {
      out[3] = (double)fd;
      out[4] = n >= 0 ? (double)n : -(double)*__errno_location();
      return END_ODD;
    }
    c[slot[S_TRANSACTIONS]] += 1;
    out[0] += 1;
    ssize_t w = send(fd, response, response_len, MSG_NOSIGNAL);
    c[slot[S_BYTES]] += (double)n + (w > 0 ? (double)w : 0);
    if (w != response_len && w >= 0) {
      out[3] = (double)fd;
      out[4] = (double)w;
      return END_PARTIAL;
    }
    close(fd);
    c[slot[S_CLOSED]] += 1;
    if (now_us() > end) return END_SLICE;
  }
}

/* The clock the loops stamp with, in µs: for the caller to convert a stamp to its own clock. */
double rr_now_us(void) {
  return now_us();
}
