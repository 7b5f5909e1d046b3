/* Helpers of the MPI_T programs: MPI_T calls return their MPI_T_ERR_* class itself and
 * may run outside MPI_Init..MPI_Finalize, so they are checked by value. */
#ifndef MPIT_UTIL_H
#define MPIT_UTIL_H

#include "mtest.h"
#include <string.h>

/* An MPI_T call that must succeed. */
#define T_CALL(call)                                                                              \
    do {                                                                                          \
        int t_rc_ = (call);                                                                       \
        if (t_rc_ != MPI_SUCCESS) {                                                               \
            mtest_fail_at(__FILE__, __LINE__, "%s: returned %d", #call, t_rc_);                   \
        }                                                                                         \
    } while (0)

/* An MPI_T call that must return `code`. */
#define T_EXPECT(code, call)                                                                      \
    do {                                                                                          \
        int t_rc_ = (call);                                                                       \
        if (t_rc_ != (code)) {                                                                    \
            mtest_fail_at(__FILE__, __LINE__, "%s: expected %s (%d) got %d", #call, #code,        \
                          (int)(code), t_rc_);                                                    \
        }                                                                                         \
    } while (0)

/* Whether the library is oxmpi (its own variables are then required). */
static inline int mpit_is_oxmpi(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(v, &len);
    return strstr(v, "oxmpi") != NULL;
}

/* The index of the control variable `name`, or -1. */
static inline int mpit_cvar(const char *name)
{
    int i = -1;
    return MPI_T_cvar_get_index(name, &i) == MPI_SUCCESS ? i : -1;
}

/* The index of the performance variable `name` of class `cls`, or -1. */
static inline int mpit_pvar(const char *name, int cls)
{
    int i = -1;
    return MPI_T_pvar_get_index(name, cls, &i) == MPI_SUCCESS ? i : -1;
}

#endif
