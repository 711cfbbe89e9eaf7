/* tests/fuzz/fuzz_nccl_id.c - what concerto_nccl.h's unique-id exchanges
   read from another process: the file rank 0 wrote
   (cc_nccl_id_exchange_file, read as rank 1), the reply rank 0 sends over
   TCP (cc_nccl_id_exchange_tcp as rank 1, from a peer thread here that
   answers with the input), and the hello a rank sends rank 0 (as rank 0 of
   2, to a peer thread that sends the input). The first byte picks which;
   short timeouts. Built against the CPU stand-in of CUDA and NCCL
   (tests/standin/). Invariants: an id is accepted exactly when the bytes
   are the magic and a whole id, and it is those bytes; rank 0 serves a
   hello exactly when it is the magic, rank 1 and 2 ranks; every error has
   a message; nothing leaks or hangs. */
#define _POSIX_C_SOURCE 200809L
#define CONCERTO_IMPLEMENTATION
#include "../../concerto.h"
#include "../../concerto_nccl.h"
#include "fuzz.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct peer {
    int fd;                     /* listening (reply mode) or unconnected (hello mode) */
    int port;
    const uint8_t* bytes;
    size_t n;
    unsigned char got[256];     /* what the library sent */
    size_t n_got;
} peer;

/* Rank 0's side, faked: one connection, read the hello, answer with the input. */
static void* answer(void* arg) {
    peer* p = (peer*)arg;
    int c = accept(p->fd, NULL, NULL);
    if (c >= 0) {
        ssize_t k = recv(c, p->got, 16, MSG_WAITALL);
        if (k > 0) p->n_got = (size_t)k;
        if (p->n) (void)send(c, p->bytes, p->n, MSG_NOSIGNAL);
        close(c);
    }
    close(p->fd);
    return NULL;
}

/* Rank 1's side, faked: connect, send the input as the hello, read what comes. */
static void* hello(void* arg) {
    peer* p = (peer*)arg;
    struct sockaddr_in a;
    int tries;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)p->port);
    for (tries = 0; tries < 200; tries++) {   /* until rank 0 listens */
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0) return NULL;
        if (connect(fd, (struct sockaddr*)&a, sizeof a) == 0) {
            ssize_t k;
            if (p->n) (void)send(fd, p->bytes, p->n, MSG_NOSIGNAL);
            shutdown(fd, SHUT_WR);
            k = recv(fd, p->got, sizeof p->got, MSG_WAITALL);
            if (k > 0) p->n_got = (size_t)k;
            close(fd);
            return NULL;
        }
        close(fd);
        cc__sleep_us(1000);
    }
    return NULL;
}

static int free_port(int* fd_out) {
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    if (fd < 0) return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr*)&a, sizeof a) != 0 || getsockname(fd, (struct sockaddr*)&a, &len) != 0) { close(fd); return -1; }
    *fd_out = fd;
    return ntohs(a.sin_port);
}

static int is_id(const uint8_t* b, size_t n) { return n >= CONCERTO__NCCL_ID_BYTES && memcmp(b, CONCERTO__NCCL_ID_MAGIC, 8) == 0; }

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    cc_context* ctx = NULL;
    ncclUniqueId id;
    cc_result rc;
    unsigned mode;
    if (size < 1 || cc_context_create(NULL, &ctx) != CC_OK) return 0;
    mode = data[0] % 3;
    data++; size--;
    memset(&id, 0, sizeof id);
    if (mode == 0) {   /* the file */
        char path[256];
        const char* dir = getenv("TMPDIR");
        FILE* f;
        snprintf(path, sizeof path, "%s/fuzz_nccl_id.%ld", dir && dir[0] ? dir : "/tmp", (long)getpid());
        if ((f = fopen(path, "wb")) != NULL) {
            if (size) (void)fwrite(data, 1, size, f);
            fclose(f);
            rc = cc_nccl_id_exchange_file(ctx, path, 1, 0.002, &id);
            FZ_CHECK((rc == CC_OK) == is_id(data, size), "file of %zu bytes: %s", size, rc == CC_OK ? "accepted" : cc_last_error(ctx));
            if (rc == CC_OK) FZ_CHECK(memcmp(&id, data + 8, sizeof id) == 0, "the id read is not the file's");
            else FZ_CHECK(cc_last_error(ctx)[0] != 0, "no message");
            remove(path);
        }
    } else if (mode == 1) {   /* rank 0's reply */
        peer p;
        pthread_t t;
        memset(&p, 0, sizeof p);
        p.bytes = data; p.n = size;
        if ((p.port = free_port(&p.fd)) > 0 && listen(p.fd, 4) == 0 && pthread_create(&t, NULL, answer, &p) == 0) {
            rc = cc_nccl_id_exchange_tcp(ctx, "127.0.0.1", p.port, 1, 2, 0.05, &id);
            pthread_join(t, NULL);
            FZ_CHECK(p.n_got == 16 && memcmp(p.got, CONCERTO__NCCL_HI_MAGIC, 8) == 0, "rank 1 sent no hello");
            FZ_CHECK((rc == CC_OK) == is_id(data, size), "a reply of %zu bytes: %s", size, rc == CC_OK ? "accepted" : cc_last_error(ctx));
            if (rc == CC_OK) FZ_CHECK(memcmp(&id, data + 8, sizeof id) == 0, "the id fetched is not the reply's");
            else FZ_CHECK(cc_last_error(ctx)[0] != 0, "no message");
        } else if (p.fd > 0) close(p.fd);
    } else {   /* a hello to rank 0 */
        peer p;
        pthread_t t;
        int fd = -1, valid;
        memset(&p, 0, sizeof p);
        p.bytes = data; p.n = size;
        if ((p.port = free_port(&fd)) > 0) {
            close(fd);   /* a port that was free: rank 0 listens on it */
            if (pthread_create(&t, NULL, hello, &p) == 0) {
                rc = cc_nccl_id_exchange_tcp(ctx, NULL, p.port, 0, 2, 0.05, &id);
                pthread_join(t, NULL);
                valid = size >= 16 && memcmp(data, CONCERTO__NCCL_HI_MAGIC, 8) == 0 && data[8] == 0 && data[9] == 0 &&
                        data[10] == 0 && data[11] == 1 && data[12] == 0 && data[13] == 0 && data[14] == 0 && data[15] == 2;
                if (rc == CC_OK) {
                    FZ_CHECK(valid, "rank 0 served a hello it should refuse");
                    FZ_CHECK(p.n_got == CONCERTO__NCCL_ID_BYTES && memcmp(p.got + 8, &id, sizeof id) == 0, "the id served is not rank 0's");
                } else {
                    FZ_CHECK(cc_last_error(ctx)[0] != 0, "no message");
                    FZ_CHECK(!valid || rc == CC_ERR_IO, "a valid hello refused: %s", cc_last_error(ctx));   /* IO: the port was taken */
                    FZ_CHECK(p.n_got == 0, "rank 0 answered a hello it refused");
                }
            }
        }
    }
    cc_context_destroy(ctx);
    return 0;
}
