#pragma once
#include <spawn.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/types.h>

/// Reads the credentials the kernel recorded when the peer of a connected Unix socket called connect().
///
/// Returns 0 and fills the outputs, or -1 with errno set.
int cposix_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid);

/// accept4(2) with SOCK_NONBLOCK | SOCK_CLOEXEC; accept4 is declared only with _GNU_SOURCE.
int cposix_accept(int listener);

/// memfd_create(2) with MFD_CLOEXEC: an anonymous in-memory file, for bodies fetched into memory. Declared only
/// with _GNU_SOURCE.
int cposix_memfd(const char *name);

/// memmem(3) (declared only with _GNU_SOURCE): where `needle` first occurs in `haystack`, or NULL.
const void *cposix_memmem(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length);

/// malloc_trim(0): gives the free memory in every malloc arena back to the system, as far as it can. glibc keeps
/// freed memory for reuse, and its arenas never shrink on their own below their highest used chunk.
///
/// Returns 1 when memory was released, 0 otherwise.
int cposix_trim_heap(void);

/// glibc's initial mmap threshold, which cposix_keep_malloc_thresholds keeps: a block this big or bigger is mapped
/// and unmapped on its own, page faults and all.
#define CPOSIX_MMAP_THRESHOLD (128 * 1024)

/// mallopt(M_MMAP_THRESHOLD, CPOSIX_MMAP_THRESHOLD): keeps glibc's initial thresholds for good. By default glibc raises its mmap
/// threshold to the largest block freed so far (up to 32 MiB) and its trim threshold to twice that, after which each
/// thread's arena keeps up to that much free memory at its top, where malloc_trim does not reach it.
///
/// Returns 1 on success, 0 on error.
int cposix_keep_malloc_thresholds(void);

/// sync_file_range(2) with SYNC_FILE_RANGE_WRITE: starts writeback of the range's dirty pages and returns without
/// waiting for it (declared only with _GNU_SOURCE). A later fsync then finds most of the data already on disk.
///
/// Returns 0, or -1 with errno set.
int cposix_start_writeback(int fd, off_t offset, off_t count);

/// pthread_setname_np(3) for the calling thread (declared only with _GNU_SOURCE): the name `ps -L`, `top -H` and
/// core dumps show. Longer names are cut to the kernel's 15 bytes.
///
/// Returns 0 or an error number.
int cposix_name_current_thread(const char *name);

/// renameat2(2) with RENAME_NOREPLACE (declared only with _GNU_SOURCE): moves `from` to `to` only if nothing is at
/// `to`, atomically; a file that appeared after a name check is never overwritten. Where the file system lacks
/// RENAME_NOREPLACE (EINVAL), link(2) then unlink(2) gives the same guarantee.
///
/// Returns 0, or -1 with errno set (EEXIST when `to` is taken).
int cposix_rename_noreplace(const char *from, const char *to);

/// renameat2(2) with RENAME_NOREPLACE, relative to directory descriptors: as cposix_rename_noreplace, with `from`
/// and `to` names inside `from_directory` and `to_directory` (linkat(2) then unlinkat(2) where the file system
/// lacks RENAME_NOREPLACE).
///
/// Returns 0, or -1 with errno set (EEXIST when `to` is taken).
int cposix_renameat_noreplace(int from_directory, const char *from, int to_directory, const char *to);

/// posix_spawn_file_actions_addclosefrom_np(3) (declared only with _GNU_SOURCE): the child closes every descriptor
/// from `lowest` up, so it inherits none of the spawner's that are not close-on-exec.
///
/// Returns 0 or an error number.
int cposix_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest);

/// Grows the process's descriptor table to hold descriptors 0 to `count` - 1 (fewer when RLIMIT_NOFILE's soft limit
/// is lower), by duplicating a descriptor to the highest of them and closing it: the table never shrinks. In a
/// multi-threaded process the kernel grows the table inside whichever call allocates the descriptor that does not
/// fit (accept4, open), and that call then waits for an RCU grace period (several milliseconds) before the old
/// table may be freed; a single-threaded process grows it without waiting.
///
/// Returns the number of descriptors the table now holds at least, or -1 with errno set.
int cposix_reserve_descriptors(int count);

/// A timerfd(2) on CLOCK_REALTIME (non-blocking, close-on-exec) armed, with TFD_TIMER_ABSTIME |
/// TFD_TIMER_CANCEL_ON_SET, for a time that never comes: reading it fails with ECANCELED once the wall clock is set
/// or moved on by a resume from suspend. Swift's Glibc module does not carry <sys/timerfd.h>.
///
/// Returns the descriptor, or -1 with errno set.
int cposix_wall_clock_timer(void);

/// Arms a descriptor of cposix_wall_clock_timer again, after a read reported the jump.
///
/// Returns 0, or -1 with errno set.
int cposix_rearm_wall_clock_timer(int fd);

/// A timerfd(2) on CLOCK_MONOTONIC (non-blocking, close-on-exec), disarmed.
///
/// Returns the descriptor, or -1 with errno set.
int cposix_monotonic_timer(void);

/// Arms a descriptor of cposix_monotonic_timer for the absolute CLOCK_MONOTONIC time `microseconds` (the unit of
/// sd_bus_get_timeout; 0 counts as already due), or disarms it when `microseconds` is UINT64_MAX. Either way, an
/// expiry not yet read is forgotten, so the descriptor is readable only once the new time passes.
///
/// Returns 0, or -1 with errno set.
int cposix_arm_monotonic_timer(int fd, uint64_t microseconds);

/// fsetxattr(2): sets the extended attribute `name` of the open file `fd` to `size` bytes of `value`, creating or
/// replacing it. <sys/xattr.h> is not in Swift's Glibc module.
///
/// Returns 0, or -1 with errno set (ENOTSUP where the file system keeps no such attributes).
int cposix_set_file_attribute(int fd, const char *name, const void *value, size_t size);

/// lgetxattr(2): reads the extended attribute `name` of the file at `path` into `value`, without following a
/// symbolic link at the end of the path (a link has no user attributes of its own).
///
/// Returns the attribute's size, or -1 with errno set (ENODATA when there is none, ERANGE when `size` is too small).
ssize_t cposix_read_link_attribute(const char *path, const char *name, void *value, size_t size);
