#include "cposix.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/xattr.h>
#include <unistd.h>

int cposix_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid) {
    // struct ucred is only declared with _GNU_SOURCE, which Swift's Glibc module does not see.
    struct ucred credentials;
    socklen_t length = sizeof(credentials);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) {
        return -1;
    }
    *pid = credentials.pid;
    *uid = credentials.uid;
    *gid = credentials.gid;
    return 0;
}

int cposix_accept(int listener) {
    return accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

const void *cposix_memmem(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length) {
    return memmem(haystack, haystack_length, needle, needle_length);
}

int cposix_memfd(const char *name) {
    return memfd_create(name, MFD_CLOEXEC);
}

int cposix_trim_heap(void) {
    return malloc_trim(0);
}

int cposix_keep_malloc_thresholds(void) {
    // > Dynamic adjustment of the mmap threshold is disabled if any of the M_TRIM_THRESHOLD, M_TOP_PAD,
    // > M_MMAP_THRESHOLD, or M_MMAP_MAX parameters is set.
    return mallopt(M_MMAP_THRESHOLD, CPOSIX_MMAP_THRESHOLD);
}

int cposix_start_writeback(int fd, off_t offset, off_t count) {
    return sync_file_range(fd, offset, count, SYNC_FILE_RANGE_WRITE);
}

int cposix_name_current_thread(const char *name) {
    char truncated[16];
    strncpy(truncated, name, sizeof truncated - 1);
    truncated[sizeof truncated - 1] = '\0';
    return pthread_setname_np(pthread_self(), truncated);
}

int cposix_rename_noreplace(const char *from, const char *to) {
    if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) {
        return 0;
    }
    if (errno != EINVAL && errno != ENOSYS) {
        return -1;
    }
    if (link(from, to) != 0) {
        return -1;
    }
    return unlink(from);
}

int cposix_renameat_noreplace(int from_directory, const char *from, int to_directory, const char *to) {
    if (renameat2(from_directory, from, to_directory, to, RENAME_NOREPLACE) == 0) {
        return 0;
    }
    if (errno != EINVAL && errno != ENOSYS) {
        return -1;
    }
    if (linkat(from_directory, from, to_directory, to, 0) != 0) {
        return -1;
    }
    return unlinkat(from_directory, from, 0);
}

int cposix_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}

int cposix_rearm_wall_clock_timer(int fd) {
    // 2200-01-01 00:00:00 UTC: far enough that it is never reached, so only a jump ends the wait.
    struct itimerspec never = {.it_interval = {0, 0}, .it_value = {7258118400, 0}};
    return timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &never, NULL);
}

int cposix_wall_clock_timer(void) {
    int fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
    if (fd < 0) return -1;
    if (cposix_rearm_wall_clock_timer(fd) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int cposix_reserve_descriptors(int count) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return -1;
    if (limit.rlim_cur != RLIM_INFINITY && (rlim_t)count > limit.rlim_cur) count = (int)limit.rlim_cur;
    if (count < 1) {
        errno = EINVAL;
        return -1;
    }
    // Any open descriptor will do as the original; "/" as O_PATH needs no permission and exists in every namespace.
    int original = open("/", O_PATH | O_CLOEXEC);
    if (original < 0) return -1;
    // F_DUPFD takes the lowest free descriptor at or above its argument: when count - 1 is taken the copy lands higher,
    // or fails with EMFILE at the limit, and either way the table already holds count.
    int copy = fcntl(original, F_DUPFD_CLOEXEC, count - 1);
    int saved = errno;
    close(original);
    if (copy < 0 && saved != EMFILE) {
        errno = saved;
        return -1;
    }
    if (copy >= 0) close(copy);
    return count;
}

int cposix_monotonic_timer(void) {
    return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
}

int cposix_arm_monotonic_timer(int fd, uint64_t microseconds) {
    struct itimerspec when = {.it_interval = {0, 0}, .it_value = {0, 0}};
    if (microseconds != UINT64_MAX) {
        // An it_value of zero would disarm: a time already due is the first nanosecond instead. Seconds from
        // microseconds stay far inside time_t.
        when.it_value.tv_sec = (time_t)(microseconds / 1000000);
        when.it_value.tv_nsec = (long)(microseconds % 1000000) * 1000;
        if (when.it_value.tv_sec == 0 && when.it_value.tv_nsec == 0) when.it_value.tv_nsec = 1;
    }
    return timerfd_settime(fd, TFD_TIMER_ABSTIME, &when, NULL);
}

int cposix_set_file_attribute(int fd, const char *name, const void *value, size_t size) {
    return fsetxattr(fd, name, value, size, 0);
}

ssize_t cposix_read_link_attribute(const char *path, const char *name, void *value, size_t size) {
    return lgetxattr(path, name, value, size);
}
