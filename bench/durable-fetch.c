// The least a durable downloader built on libcurl does, for bench/downloads' "libcurl durable floor" line:
// PARALLEL threads, each with one easy handle (so one kept connection), fetch the listed URLs into
// DIR/NAME.part, fsync the file, rename it to DIR/NAME, and every PARALLEL completions one of them fsyncs the
// directory (singlecast syncs the directory once per group commit), once more at the end. No queue, no store, no
// events: what is left of singlecast's work per download when the bookkeeping is taken away.
//
// Usage: durable-fetch DIR PARALLEL URL-LIST   (one URL per line; the file name is the URL's last segment)
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lines.h"

static char **urls;
static size_t url_count;
static atomic_size_t next_url;
static atomic_size_t completed;
static atomic_int failed;
static int directory_fd;
static size_t parallel;

static size_t write_all(char *data, size_t size, size_t count, void *context) {
    int fd = *(int *)context;
    size_t length = size * count, written = 0;
    while (written < length) {
        ssize_t n = write(fd, data + written, length - written);
        if (n < 0) {
            if (errno == EINTR) continue;
            return 0;  // makes libcurl fail the transfer with CURLE_WRITE_ERROR
        }
        written += (size_t)n;
    }
    return length;
}

static int fetch(CURL *handle, const char *url) {
    const char *name = strrchr(url, '/');
    name = name ? name + 1 : url;
    char partial[4096];
    if (snprintf(partial, sizeof partial, "%s.part", name) >= (int)sizeof partial) return -1;
    int fd = openat(directory_fd, partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    curl_easy_setopt(handle, CURLOPT_URL, url);
    curl_easy_setopt(handle, CURLOPT_WRITEDATA, &fd);
    long status = 0;
    int ok = curl_easy_perform(handle) == CURLE_OK
        && curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK && status == 200
        && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok || renameat(directory_fd, partial, directory_fd, name) != 0) return -1;
    if ((atomic_fetch_add(&completed, 1) + 1) % parallel == 0 && fsync(directory_fd) != 0) return -1;
    return 0;
}

static void *worker(void *unused) {
    (void)unused;
    CURL *handle = curl_easy_init();
    if (!handle) {
        atomic_store(&failed, 1);
        return NULL;
    }
    curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, write_all);
    for (;;) {
        size_t index = atomic_fetch_add(&next_url, 1);
        if (index >= url_count) break;
        if (fetch(handle, urls[index]) != 0) {
            fprintf(stderr, "durable-fetch: %s failed\n", urls[index]);
            atomic_store(&failed, 1);
        }
    }
    curl_easy_cleanup(handle);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 4 || (parallel = strtoul(argv[2], NULL, 10)) == 0 || parallel > 256) {
        fprintf(stderr, "usage: durable-fetch DIR PARALLEL URL-LIST\n");
        return 2;
    }
    directory_fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    urls = read_lines(argv[3], &url_count);
    if (directory_fd < 0 || !urls) {
        perror("durable-fetch");
        return 1;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    pthread_t threads[256];
    for (size_t i = 0; i < parallel; i++) pthread_create(&threads[i], NULL, worker, NULL);
    for (size_t i = 0; i < parallel; i++) pthread_join(threads[i], NULL);
    if (fsync(directory_fd) != 0) return 1;
    curl_global_cleanup();
    return atomic_load(&failed) ? 1 : 0;
}
