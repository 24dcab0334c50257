#pragma once
#include <sys/types.h>

/// Reads the credentials the kernel recorded when the peer of a connected Unix socket called connect().
///
/// Returns 0 and fills the outputs, or -1 with errno set.
int cposix_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid);
