#pragma once
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>

/// org.freedesktop.Notifications.Notify(app, 0, icon, summary, body, [], {}, expire_ms) on `bus`, waiting at
/// most `timeout_usec` for the answer. sd_bus_call_method is variadic, so Swift cannot call it directly.
///
/// Returns the notification's id (> 0), or a negative errno; `error_name` and `error_message` (when not NULL)
/// receive the D-Bus error's texts, which the caller frees.
static inline int64_t csystemd_bus_notify(sd_bus *bus, const char *app, const char *icon, const char *summary,
                                          const char *body, int32_t expire_ms, uint64_t timeout_usec,
                                          char **error_name, char **error_message) {
    sd_bus_message *call = NULL, *reply = NULL;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    uint32_t id = 0;
    int r = sd_bus_message_new_method_call(bus, &call, "org.freedesktop.Notifications",
                                           "/org/freedesktop/Notifications", "org.freedesktop.Notifications",
                                           "Notify");
    if (r >= 0)
        r = sd_bus_message_append(call, "susssasa{sv}i", app, (uint32_t)0, icon, summary, body, 0, 0, expire_ms);
    if (r >= 0)
        r = sd_bus_call(bus, call, timeout_usec, &error, &reply);
    if (r >= 0)
        r = sd_bus_message_read(reply, "u", &id);
    if (r < 0 && sd_bus_error_is_set(&error)) {
        if (error_name && error.name) *error_name = strdup(error.name);
        if (error_message && error.message) *error_message = strdup(error.message);
    }
    sd_bus_error_free(&error);
    sd_bus_message_unref(reply);
    sd_bus_message_unref(call);
    return r < 0 ? (int64_t)r : (int64_t)id;
}

/// What NetworkManager said, filled in by the callbacks below while sd_bus_process runs; the Swift side reads it
/// after each pass and clears the flags.
typedef struct {
    /// Set when `metered` holds a new value (NM_METERED_UNKNOWN 0, YES 1, NO 2, GUESS_YES 3, GUESS_NO 4).
    int updated;
    uint32_t metered;
    /// Set when the question was answered with an error (no NetworkManager, no such property, a time-out).
    int failed;
    char error_name[128];
    /// Set when org.freedesktop.NetworkManager got an owner (1) or lost it (2) on the bus.
    int owner_changed;
} csystemd_nm_state;

/// Reads a variant holding an unsigned or signed integer (a mock may not send the `u` NetworkManager does).
static inline int csystemd__read_metered_variant(sd_bus_message *m, uint32_t *out) {
    char type = 0;
    const char *contents = NULL;
    int r = sd_bus_message_peek_type(m, &type, &contents);
    if (r < 0) return r;
    if (type != SD_BUS_TYPE_VARIANT || contents == NULL) return -EINVAL;
    r = sd_bus_message_enter_container(m, SD_BUS_TYPE_VARIANT, contents);
    if (r < 0) return r;
    if (strcmp(contents, "u") == 0) {
        r = sd_bus_message_read_basic(m, 'u', out);
    } else if (strcmp(contents, "i") == 0) {
        int32_t value = 0;
        r = sd_bus_message_read_basic(m, 'i', &value);
        *out = (uint32_t)value;
    } else {
        r = -EINVAL;
    }
    if (r < 0) return r;
    return sd_bus_message_exit_container(m);
}

/// org.freedesktop.DBus.Properties.PropertiesChanged(s interface, a{sv} changed, as invalidated).
static inline int csystemd__nm_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
    (void)ret_error;
    csystemd_nm_state *state = userdata;
    const char *interface = NULL;
    if (sd_bus_message_read_basic(m, 's', &interface) < 0 || interface == NULL) return 0;
    if (strcmp(interface, "org.freedesktop.NetworkManager") != 0) return 0;
    if (sd_bus_message_enter_container(m, SD_BUS_TYPE_ARRAY, "{sv}") < 0) return 0;
    while (sd_bus_message_enter_container(m, SD_BUS_TYPE_DICT_ENTRY, "sv") > 0) {
        const char *name = NULL;
        if (sd_bus_message_read_basic(m, 's', &name) < 0 || name == NULL) return 0;
        if (strcmp(name, "Metered") == 0) {
            uint32_t value = 0;
            if (csystemd__read_metered_variant(m, &value) < 0) return 0;
            state->metered = value;
            state->updated = 1;
        } else if (sd_bus_message_skip(m, "v") < 0) {
            return 0;
        }
        if (sd_bus_message_exit_container(m) < 0) return 0;
    }
    return 0;
}

/// The answer to Get("org.freedesktop.NetworkManager", "Metered"): a variant, or an error.
static inline int csystemd__nm_metered_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
    (void)ret_error;
    csystemd_nm_state *state = userdata;
    const sd_bus_error *error = sd_bus_message_get_error(m);
    if (error != NULL) {
        state->failed = 1;
        snprintf(state->error_name, sizeof state->error_name, "%s", error->name ? error->name : "unknown error");
        return 0;
    }
    uint32_t value = 0;
    if (csystemd__read_metered_variant(m, &value) < 0) {
        state->failed = 1;
        snprintf(state->error_name, sizeof state->error_name, "%s", "an answer that is not a number");
        return 0;
    }
    state->metered = value;
    state->updated = 1;
    return 0;
}

/// org.freedesktop.DBus.NameOwnerChanged(s name, s old_owner, s new_owner), matched on NetworkManager's name.
static inline int csystemd__nm_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
    (void)ret_error;
    csystemd_nm_state *state = userdata;
    const char *name = NULL, *old_owner = NULL, *new_owner = NULL;
    if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0) return 0;
    state->owner_changed = (new_owner != NULL && new_owner[0] != '\0') ? 1 : 2;
    return 0;
}

/// Subscribes to NetworkManager's PropertiesChanged and to its name appearing or leaving the bus, without waiting
/// for the broker's confirmation (sd_bus_add_match would block for it); a match the broker refuses ends the
/// connection. The matches live as long as the bus (floating slots). Kept in C because the callbacks are.
static inline int csystemd_nm_watch(sd_bus *bus, csystemd_nm_state *state) {
    int r = sd_bus_add_match_async(bus, NULL,
                             "type='signal',sender='org.freedesktop.NetworkManager',"
                             "path='/org/freedesktop/NetworkManager',"
                             "interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
                             "arg0='org.freedesktop.NetworkManager'",
                             csystemd__nm_properties_changed, NULL, state);
    if (r < 0) return r;
    return sd_bus_add_match_async(bus, NULL,
                            "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
                            "interface='org.freedesktop.DBus',member='NameOwnerChanged',"
                            "arg0='org.freedesktop.NetworkManager'",
                            csystemd__nm_owner_changed, NULL, state);
}

/// Asks for NetworkManager's Metered property without waiting: the answer comes through sd_bus_process, within
/// `timeout_usec`. sd_bus_message_append is variadic, so Swift cannot call it directly.
static inline int csystemd_nm_request_metered(sd_bus *bus, csystemd_nm_state *state, uint64_t timeout_usec) {
    sd_bus_message *call = NULL;
    int r = sd_bus_message_new_method_call(bus, &call, "org.freedesktop.NetworkManager",
                                           "/org/freedesktop/NetworkManager", "org.freedesktop.DBus.Properties",
                                           "Get");
    if (r >= 0) r = sd_bus_message_append(call, "ss", "org.freedesktop.NetworkManager", "Metered");
    if (r >= 0) r = sd_bus_call_async(bus, NULL, call, csystemd__nm_metered_reply, state, timeout_usec);
    sd_bus_message_unref(call);
    return r;
}
