#pragma once
#include <stdint.h>
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
