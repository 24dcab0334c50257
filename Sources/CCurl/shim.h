#pragma once
#include <curl/curl.h>

/// curl_easy_setopt is variadic, so Swift cannot call it directly: one typed shim per argument kind.
static inline CURLcode ccurl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

/// The version string of the libcurl this process runs with (not the headers it was built against).
static inline const char *ccurl_runtime_version(void) {
    return curl_version_info(CURLVERSION_NOW)->version;
}
