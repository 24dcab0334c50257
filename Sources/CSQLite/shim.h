#pragma once
#include <sqlite3.h>

/// sqlite3_db_config is variadic, so Swift cannot call it directly.
static inline int csqlite_enable_defensive(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)0);
}

/// sqlite3_config is variadic too. Without memory statistics, which nothing reads, every allocation SQLite makes
/// skips a global mutex and two counters. Only takes effect before SQLite initializes (SQLITE_MISUSE after).
static inline int csqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
