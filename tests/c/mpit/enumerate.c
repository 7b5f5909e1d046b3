/* Enumerates every control variable, performance variable, category, enumeration and
 * time source of the tool information interface, before MPI_Init and again after it,
 * and checks what each get_info call returns: names that their get_index call finds
 * again, lengths by the string convention (length + 1; truncated to n - 1 characters,
 * n; NULL buffer or length 0 for the length alone), datatypes of the allowed set, valid
 * verbosities, scopes, bindings and classes, categories whose lists name valid
 * variables, and a value read through a handle for every control variable.
 * On oxmpi also: every variable belongs to exactly one category, and the variables
 * the documentation lists exist. */
#include "mpit_util.h"

static int valid_type(MPI_Datatype t)
{
    return t == MPI_INT || t == MPI_UNSIGNED || t == MPI_UNSIGNED_LONG ||
           t == MPI_UNSIGNED_LONG_LONG || t == MPI_COUNT || t == MPI_CHAR || t == MPI_DOUBLE;
}

static int valid_verbosity(int v)
{
    return v >= MPI_T_VERBOSITY_USER_BASIC && v <= MPI_T_VERBOSITY_MPIDEV_ALL;
}

static int valid_bind(int b)
{
    return b >= MPI_T_BIND_NO_OBJECT && b <= MPI_T_BIND_MPI_INFO;
}

static void check_enum(MPI_T_enum e)
{
    int num = -1, len = 256;
    char name[256];
    T_CALL(MPI_T_enum_get_info(e, &num, name, &len));
    MTEST_CHECK(num >= 1, "enumeration %s has %d items", name, num);
    MTEST_EQ("enum name length", (int)strlen(name) + 1, len);
    for (int k = 0; k < num; k++) {
        int value = -1, ilen = 256;
        char item[256];
        T_CALL(MPI_T_enum_get_item(e, k, &value, item, &ilen));
        MTEST_EQ("enum item name length", (int)strlen(item) + 1, ilen);
    }
    int value, ilen = 0;
    T_EXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_enum_get_item(e, num, &value, NULL, &ilen));
}

/* The string convention on the name of control variable 0. */
static void check_strings(void)
{
    char full[256], small[4];
    int len = sizeof full;
    T_CALL(MPI_T_cvar_get_info(0, full, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    int want = (int)strlen(full) + 1;
    MTEST_EQ("name_len", want, len);
    memset(small, 'x', sizeof small);
    len = sizeof small;
    T_CALL(MPI_T_cvar_get_info(0, small, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    /* Truncated: the length of what was returned plus one (as MPICH and Open MPI read
     * the convention). */
    MTEST_EQ("truncated name_len", want < 4 ? want : 4, len);
    MTEST_CHECK(want <= 4 || (small[3] == '\0' && strncmp(small, full, 3) == 0),
                "truncated name %.4s of %s", small, full);
    len = 0;
    small[0] = 'y';
    T_CALL(MPI_T_cvar_get_info(0, small, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    MTEST_EQ("name_len for length 0", want, len);
    MTEST_CHECK(small[0] == 'y', "length 0 wrote the name");
    len = 100;
    T_CALL(MPI_T_cvar_get_info(0, NULL, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    MTEST_EQ("name_len for a NULL buffer", want, len);
    /* A NULL length returns nothing and is no error. */
    small[0] = 'z';
    T_CALL(MPI_T_cvar_get_info(0, small, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    MTEST_CHECK(small[0] == 'z', "NULL length wrote the name");
}

static void enumerate(int oxmpi, const char *when)
{
    int ncvar = -1, npvar = -1, ncat = -1, nsrc = -1;
    T_CALL(MPI_T_cvar_get_num(&ncvar));
    T_CALL(MPI_T_pvar_get_num(&npvar));
    T_CALL(MPI_T_category_get_num(&ncat));
    MTEST_CHECK(ncvar >= 0 && npvar >= 0 && ncat >= 0, "%s: counts %d %d %d", when, ncvar,
                npvar, ncat);
    int *cvar_seen = calloc((size_t)ncvar + 1, sizeof(int));
    int *pvar_seen = calloc((size_t)npvar + 1, sizeof(int));

    for (int i = 0; i < ncvar; i++) {
        char name[256], desc[4096];
        int name_len = sizeof name, desc_len = sizeof desc, verbosity = -1, bind = -1,
            scope = -1;
        MPI_Datatype type = MPI_DATATYPE_NULL;
        MPI_T_enum e = MPI_T_ENUM_NULL;
        T_CALL(MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &type, &e, desc, &desc_len,
                                   &bind, &scope));
        MTEST_EQ("cvar name_len", (int)strlen(name) + 1, name_len);
        MTEST_CHECK(name_len > 1, "%s: cvar %d has an empty name", when, i);
        MTEST_CHECK(valid_type(type), "%s: cvar %s has datatype %#x", when, name, (unsigned)type);
        MTEST_CHECK(valid_verbosity(verbosity), "%s: cvar %s verbosity %d", when, name,
                    verbosity);
        MTEST_CHECK(valid_bind(bind), "%s: cvar %s bind %d", when, name, bind);
        MTEST_CHECK(scope >= MPI_T_SCOPE_CONSTANT && scope <= MPI_T_SCOPE_ALL_EQ,
                    "%s: cvar %s scope %d", when, name, scope);
        int again = -1;
        T_CALL(MPI_T_cvar_get_index(name, &again));
        MTEST_EQ("MPI_T_cvar_get_index of its own name", i, again);
        if (e != MPI_T_ENUM_NULL) {
            check_enum(e);
        }
        if (bind == MPI_T_BIND_NO_OBJECT) {
            MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL;
            int count = -1;
            T_CALL(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
            MTEST_CHECK(count >= 1, "%s: cvar %s count %d", when, name, count);
            if (count >= 1 && count < 100000) {
                size_t unit = type == MPI_CHAR ? 1 : 8;
                char *buf = calloc((size_t)count, unit);
                T_CALL(MPI_T_cvar_read(h, buf));
                if (type == MPI_CHAR) {
                    MTEST_CHECK(memchr(buf, 0, (size_t)count) != NULL,
                                "%s: cvar %s text is not terminated", when, name);
                }
                free(buf);
            }
            T_CALL(MPI_T_cvar_handle_free(&h));
            MTEST_CHECK(h == MPI_T_CVAR_HANDLE_NULL, "handle not set to MPI_T_CVAR_HANDLE_NULL");
        }
        if (oxmpi) {
            MTEST_CHECK(strncmp(name, "OXMPI_", 6) == 0, "%s: cvar %s", when, name);
            MTEST_CHECK(strlen(desc) > 10, "%s: cvar %s has no description", when, name);
        }
    }

    for (int i = 0; i < npvar; i++) {
        char name[256], desc[4096];
        int name_len = sizeof name, desc_len = sizeof desc, verbosity = -1, cls = -1, bind = -1,
            readonly = -1, continuous = -1, atomic = -1;
        MPI_Datatype type = MPI_DATATYPE_NULL;
        MPI_T_enum e = MPI_T_ENUM_NULL;
        T_CALL(MPI_T_pvar_get_info(i, name, &name_len, &verbosity, &cls, &type, &e, desc,
                                   &desc_len, &bind, &readonly, &continuous, &atomic));
        MTEST_EQ("pvar name_len", (int)strlen(name) + 1, name_len);
        MTEST_CHECK(valid_type(type), "%s: pvar %s datatype %#x", when, name, (unsigned)type);
        MTEST_CHECK(valid_verbosity(verbosity), "%s: pvar %s verbosity %d", when, name,
                    verbosity);
        MTEST_CHECK(valid_bind(bind), "%s: pvar %s bind %d", when, name, bind);
        MTEST_CHECK(cls >= MPI_T_PVAR_CLASS_STATE && cls <= MPI_T_PVAR_CLASS_GENERIC,
                    "%s: pvar %s class %d", when, name, cls);
        MTEST_CHECK(readonly == 0 || readonly == 1, "readonly %d", readonly);
        MTEST_CHECK(continuous == 0 || continuous == 1, "continuous %d", continuous);
        MTEST_CHECK(atomic == 0 || atomic == 1, "atomic %d", atomic);
        int again = -1;
        T_CALL(MPI_T_pvar_get_index(name, cls, &again));
        MTEST_EQ("MPI_T_pvar_get_index of its own name and class", i, again);
        if (e != MPI_T_ENUM_NULL) {
            check_enum(e);
        }
        if (oxmpi) {
            MTEST_CHECK(strlen(desc) > 10, "%s: pvar %s has no description", when, name);
        }
    }

    for (int c = 0; c < ncat; c++) {
        char name[256], desc[4096];
        int name_len = sizeof name, desc_len = sizeof desc, nc = -1, np = -1, nk = -1;
        T_CALL(MPI_T_category_get_info(c, name, &name_len, desc, &desc_len, &nc, &np, &nk));
        MTEST_EQ("category name_len", (int)strlen(name) + 1, name_len);
        int again = -1;
        T_CALL(MPI_T_category_get_index(name, &again));
        MTEST_EQ("MPI_T_category_get_index of its own name", c, again);
        int *idx = malloc(sizeof(int) * (size_t)(nc + np + nk + 1));
        T_CALL(MPI_T_category_get_cvars(c, nc, idx));
        for (int k = 0; k < nc; k++) {
            MTEST_CHECK(idx[k] >= 0 && idx[k] < ncvar, "category %s cvar %d", name, idx[k]);
            if (idx[k] >= 0 && idx[k] < ncvar) {
                cvar_seen[idx[k]]++;
            }
        }
        T_CALL(MPI_T_category_get_pvars(c, np, idx));
        for (int k = 0; k < np; k++) {
            MTEST_CHECK(idx[k] >= 0 && idx[k] < npvar, "category %s pvar %d", name, idx[k]);
            if (idx[k] >= 0 && idx[k] < npvar) {
                pvar_seen[idx[k]]++;
            }
        }
        T_CALL(MPI_T_category_get_categories(c, nk, idx));
        for (int k = 0; k < nk; k++) {
            MTEST_CHECK(idx[k] >= 0 && idx[k] < ncat, "category %s subcategory %d", name,
                        idx[k]);
        }
        /* A shorter list writes only what fits. */
        if (nc >= 2) {
            int two[3] = {-7, -7, -7};
            T_CALL(MPI_T_category_get_cvars(c, 2, two));
            MTEST_CHECK(two[2] == -7, "MPI_T_category_get_cvars wrote beyond len");
        }
        free(idx);
    }
    if (oxmpi) {
        for (int i = 0; i < ncvar; i++) {
            MTEST_EQ("categories holding a cvar", 1, cvar_seen[i]);
        }
        for (int i = 0; i < npvar; i++) {
            MTEST_EQ("categories holding a pvar", 1, pvar_seen[i]);
        }
        const char *pv[] = {"p2p_messages_sent", "p2p_bytes_sent", "p2p_messages_received",
                            "p2p_bytes_received"};
        for (int k = 0; k < 4; k++) {
            MTEST_CHECK(mpit_pvar(pv[k], MPI_T_PVAR_CLASS_COUNTER) >= 0, "no pvar %s", pv[k]);
        }
        MTEST_CHECK(mpit_pvar("p2p_unexpected_queue_length", MPI_T_PVAR_CLASS_LEVEL) >= 0,
                    "no unexpected-queue pvar");
        MTEST_CHECK(mpit_pvar("p2p_posted_queue_length", MPI_T_PVAR_CLASS_LEVEL) >= 0,
                    "no posted-queue pvar");
        MTEST_CHECK(mpit_pvar("wait_blocked_time", MPI_T_PVAR_CLASS_TIMER) >= 0,
                    "no blocked-time pvar");
        MTEST_CHECK(mpit_pvar("coll_algorithm_calls", MPI_T_PVAR_CLASS_COUNTER) >= 0,
                    "no collective algorithm pvar");
        MTEST_CHECK(mpit_cvar("OXMPI_COLL_ALLREDUCE_ALGO") >= 0, "no allreduce algorithm cvar");
    }
    free(cvar_seen);
    free(pvar_seen);

    T_CALL(MPI_T_source_get_num(&nsrc));
    for (int s = 0; s < nsrc; s++) {
        char name[256];
        int len = sizeof name;
        MPI_T_source_order order;
        MPI_Count tps = -1, max = -1, t1 = -1, t2 = -1;
        MPI_Info info = MPI_INFO_NULL;
        T_CALL(MPI_T_source_get_info(s, name, &len, NULL, NULL, &order, &tps, &max, &info));
        MTEST_CHECK(tps > 0, "source %s ticks per second %lld", name, (long long)tps);
        if (info != MPI_INFO_NULL) {
            MPI_Info_free(&info);
        }
        T_CALL(MPI_T_source_get_timestamp(s, &t1));
        T_CALL(MPI_T_source_get_timestamp(s, &t2));
        if (order == MPI_T_SOURCE_ORDERED) {
            MTEST_CHECK(t2 >= t1, "source %s went back: %lld then %lld", name, (long long)t1,
                        (long long)t2);
        }
    }
    int nev = -1;
    T_CALL(MPI_T_event_get_num(&nev));
    MTEST_CHECK(nev >= 0, "event count %d", nev);
    if (oxmpi) {
        MTEST_EQ("event types", 0, nev);
        MTEST_EQ("time sources", 1, nsrc);
    }
}

int main(int argc, char **argv)
{
    int provided = -1;
    int oxmpi = mpit_is_oxmpi();
    /* Before MPI_Init: the whole interface is there. */
    T_CALL(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    MTEST_CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE, "provided %d",
                provided);
    check_strings();
    enumerate(oxmpi, "before MPI_Init");
    mtest_init(&argc, &argv);
    enumerate(oxmpi, "after MPI_Init");
    T_CALL(MPI_T_finalize());
    return mtest_finalize();
}
