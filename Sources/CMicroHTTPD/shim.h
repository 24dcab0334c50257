#pragma once
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <microhttpd.h>

/// MHD_start_daemon is variadic, so Swift cannot call it: the options go in one array (MHD_OPTION_ARRAY), which the
/// caller ends with MHD_OPTION_END.
static inline struct MHD_Daemon *cmhd_start(unsigned int flags, MHD_AcceptPolicyCallback accept, void *accept_context,
                                            MHD_AccessHandlerCallback handler, void *handler_context,
                                            struct MHD_OptionItem *options) {
    return MHD_start_daemon(flags, 0, accept, accept_context, handler, handler_context, MHD_OPTION_ARRAY, options,
                            MHD_OPTION_END);
}

/// MHD_OPTION_NOTIFY_COMPLETED takes a function pointer where the option array has an intptr_t.
static inline struct MHD_OptionItem cmhd_completed_option(MHD_RequestCompletedCallback callback, void *context) {
    struct MHD_OptionItem item = {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)callback, context};
    return item;
}

/// MHD_OPTION_NOTIFY_CONNECTION, likewise.
static inline struct MHD_OptionItem cmhd_connection_option(MHD_NotifyConnectionCallback callback, void *context) {
    struct MHD_OptionItem item = {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)callback, context};
    return item;
}

/// The client's address, from the union MHD_get_connection_info returns.
static inline const struct sockaddr *cmhd_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? NULL : info->client_addr;
}

/// The port a daemon listens on (useful when it was given port 0).
static inline uint16_t cmhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/// Connections the daemon holds now.
static inline unsigned int cmhd_connection_count(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return info == NULL ? 0 : info->num_connections;
}

/// MHD_CONTENT_READER_END_OF_STREAM and _WITH_ERROR are cast macros Swift does not import.
static inline ssize_t cmhd_end_of_stream(void) { return MHD_CONTENT_READER_END_OF_STREAM; }
static inline ssize_t cmhd_end_with_error(void) { return MHD_CONTENT_READER_END_WITH_ERROR; }

/// Keeps the path and the query as the client sent them: a route decides what `%2e%2e` means, not the listener.
static inline size_t cmhd_keep_escaped(void *context, struct MHD_Connection *connection, char *text) {
    (void)context;
    (void)connection;
    return strlen(text);
}

static inline struct MHD_OptionItem cmhd_keep_escaped_option(void) {
    struct MHD_OptionItem item = {MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)cmhd_keep_escaped, NULL};
    return item;
}

/// The daemon's listening socket, or -1 when it has none (MHD_get_daemon_info is variadic).
static inline int cmhd_listen_fd(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_LISTEN_FD);
    return info == NULL ? -1 : info->listen_fd;
}
