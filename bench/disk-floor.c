// The disk floor of bench/downloads' many-file workloads: the served files, already in the page cache, copied
// into DIR by PARALLEL threads, each file written whole, fsynced and closed, then the directory fsynced once. No
// network, no rename, no bookkeeping: what durable storage alone costs, the least any downloader that syncs what it
// reports complete can take. In C so that the floor is the disk's and not an interpreter's (a Python floor spent
// about 0.1 ms a file of its own, more than the disk at 64 KiB).
//
// Usage: disk-floor DIR PARALLEL FILE-LIST   (one source path per line; each copy keeps the source's base name)
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lines.h"

enum { CHUNK = 1 << 20 };

static char **sources;
static size_t source_count;
static atomic_size_t next_source;
static atomic_int failed;
static int directory_fd;

static int write_all(int fd, const char *data, size_t length) {
    size_t written = 0;
    while (written < length) {
        ssize_t n = write(fd, data + written, length - written);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        written += (size_t)n;
    }
    return 0;
}

static int copy_and_sync(const char *source, char *buffer) {
    const char *name = strrchr(source, '/');
    name = name ? name + 1 : source;
    int reader = open(source, O_RDONLY | O_CLOEXEC);
    if (reader < 0) return -1;
    int writer = openat(directory_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (writer < 0) {
        close(reader);
        return -1;
    }
    int ok = 1;
    for (;;) {
        ssize_t n = read(reader, buffer, CHUNK);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            ok = n == 0;
            break;
        }
        if (write_all(writer, buffer, (size_t)n) != 0) {
            ok = 0;
            break;
        }
    }
    ok = ok && fsync(writer) == 0;
    ok = close(writer) == 0 && ok;
    close(reader);
    return ok ? 0 : -1;
}

static void *worker(void *unused) {
    (void)unused;
    char *buffer = malloc(CHUNK);
    if (!buffer) {
        atomic_store(&failed, 1);
        return NULL;
    }
    for (;;) {
        size_t index = atomic_fetch_add(&next_source, 1);
        if (index >= source_count) break;
        if (copy_and_sync(sources[index], buffer) != 0) {
            fprintf(stderr, "disk-floor: %s: %s\n", sources[index], strerror(errno));
            atomic_store(&failed, 1);
        }
    }
    free(buffer);
    return NULL;
}

int main(int argc, char **argv) {
    size_t parallel;
    if (argc != 4 || (parallel = strtoul(argv[2], NULL, 10)) == 0 || parallel > 256) {
        fprintf(stderr, "usage: disk-floor DIR PARALLEL FILE-LIST\n");
        return 2;
    }
    directory_fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    sources = read_lines(argv[3], &source_count);
    if (directory_fd < 0 || !sources) {
        perror("disk-floor");
        return 1;
    }
    pthread_t threads[256];
    for (size_t i = 0; i < parallel; i++) pthread_create(&threads[i], NULL, worker, NULL);
    for (size_t i = 0; i < parallel; i++) pthread_join(threads[i], NULL);
    if (fsync(directory_fd) != 0) return 1;
    return atomic_load(&failed) ? 1 : 0;
}
