#pragma once
#include <sqlite3.h>

/// sqlite3_db_config is variadic, so Swift cannot call it directly.
static inline int csqlite_enable_defensive(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)0);
}
