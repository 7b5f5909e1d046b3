/* Bad input to the tool information interface gets the right MPI_T_ERR_* class:
 * indices out of range (-1 and the count) for control and performance variables,
 * categories, enumeration items, sources and events (MPI_T_ERR_INVALID_INDEX); names
 * that name nothing (MPI_T_ERR_INVALID_NAME, also a known performance variable asked
 * for with another class); MPI_T_PVAR_SESSION_NULL as a session
 * (MPI_T_ERR_INVALID_SESSION); a handle used in a session it does not belong to
 * (MPI_T_ERR_INVALID_HANDLE); starting a continuous variable
 * (MPI_T_ERR_PVAR_NO_STARTSTOP) and writing a read-only one (MPI_T_ERR_PVAR_NO_WRITE),
 * where the library has such variables. */
#include "mpit_util.h"

int main(int argc, char **argv)
{
    int provided, n = -1, x = 0, len = 0;
    mtest_init(&argc, &argv);
    int oxmpi = mpit_is_oxmpi();
    T_CALL(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));

    int ncvar, npvar, ncat, nsrc, nev;
    T_CALL(MPI_T_cvar_get_num(&ncvar));
    T_CALL(MPI_T_pvar_get_num(&npvar));
    T_CALL(MPI_T_category_get_num(&ncat));
    T_CALL(MPI_T_source_get_num(&nsrc));
    T_CALL(MPI_T_event_get_num(&nev));
    MPI_T_cvar_handle ch;
    MPI_T_pvar_session s, s2;
    MPI_T_pvar_handle ph;
    T_CALL(MPI_T_pvar_session_create(&s));
    T_CALL(MPI_T_pvar_session_create(&s2));

    int bad[2] = {-1, 0};
    MPI_Datatype dt;
    MPI_T_enum e;
    for (int k = 0; k < 2; k++) {
        bad[1] = ncvar;
        T_EXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_cvar_get_info(bad[k], NULL, &len, &x, &dt, &e, NULL,
                                                              &len, &x, &x));
        T_EXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_cvar_handle_alloc(bad[k], NULL, &ch, &n));
        bad[1] = npvar;
        if (oxmpi) { /* MPICH 4.0.2 crashes on a bad index here */
            T_EXPECT(MPI_T_ERR_INVALID_INDEX,
                     MPI_T_pvar_get_info(bad[k], NULL, &len, &x, &x, &dt, &e, NULL, &len, &x, &x,
                                         &x, &x));
        }
        if (oxmpi) { /* MPICH 4.0.2 crashes on a bad index here */
            T_EXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_pvar_handle_alloc(s, bad[k], NULL, &ph, &n));
        }
        bad[1] = ncat;
        T_EXPECT(MPI_T_ERR_INVALID_INDEX,
                 MPI_T_category_get_info(bad[k], NULL, &len, NULL, &len, &x, &x, &x));
        T_EXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_category_get_cvars(bad[k], 0, NULL));
        T_EXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_category_get_pvars(bad[k], 0, NULL));
        T_EXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_category_get_categories(bad[k], 0, NULL));
        T_EXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_category_get_num_events(bad[k], &x));
        bad[1] = nsrc;
        MPI_Count ticks;
        T_EXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_source_get_timestamp(bad[k], &ticks));
        bad[1] = nev;
        MPI_T_event_registration reg;
        T_EXPECT(MPI_T_ERR_INVALID_INDEX,
                 MPI_T_event_handle_alloc(bad[k], NULL, MPI_INFO_NULL, &reg));
    }

    T_EXPECT(MPI_T_ERR_INVALID_NAME, MPI_T_cvar_get_index("no_such_variable_xyz", &x));
    T_EXPECT(MPI_T_ERR_INVALID_NAME,
             MPI_T_pvar_get_index("no_such_variable_xyz", MPI_T_PVAR_CLASS_COUNTER, &x));
    T_EXPECT(MPI_T_ERR_INVALID_NAME, MPI_T_category_get_index("no_such_category_xyz", &x));
    T_EXPECT(MPI_T_ERR_INVALID_NAME, MPI_T_event_get_index("no_such_event_xyz", &x));

    T_EXPECT(MPI_T_ERR_INVALID_SESSION, MPI_T_pvar_start(MPI_T_PVAR_SESSION_NULL,
                                                         MPI_T_PVAR_ALL_HANDLES));
    T_EXPECT(MPI_T_ERR_INVALID_SESSION,
             MPI_T_pvar_handle_alloc(MPI_T_PVAR_SESSION_NULL, 0, NULL, &ph, &n));

    /* The variables of each class: another class is not that variable; a continuous one
     * cannot be started, a read-only one not written. */
    MPI_Comm world = MPI_COMM_WORLD;
    int did_startstop = 0, did_readonly = 0, did_session = 0;
    for (int i = 0; i < npvar; i++) {
        char name[256];
        int nlen = sizeof name, cls, bind, ro, cont, at;
        T_CALL(MPI_T_pvar_get_info(i, name, &nlen, &x, &cls, &dt, &e, NULL, &len, &bind, &ro,
                                   &cont, &at));
        int other = cls == MPI_T_PVAR_CLASS_GENERIC ? MPI_T_PVAR_CLASS_STATE : cls + 1;
        int j = -1;
        if (MPI_T_pvar_get_index(name, other, &j) == MPI_SUCCESS) {
            continue; /* the same name in another class: a different variable */
        }
        T_EXPECT(MPI_T_ERR_INVALID_NAME, MPI_T_pvar_get_index(name, other, &j));
        if (bind != MPI_T_BIND_NO_OBJECT && bind != MPI_T_BIND_MPI_COMM) {
            continue;
        }
        void *obj = bind == MPI_T_BIND_MPI_COMM ? (void *)&world : NULL;
        if (MPI_T_pvar_handle_alloc(s, i, obj, &ph, &n) != MPI_SUCCESS) {
            continue;
        }
        if (!did_session) {
            T_EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_reset(s2, ph));
            did_session = 1;
        }
        if (cont && !did_startstop) {
            T_EXPECT(MPI_T_ERR_PVAR_NO_STARTSTOP, MPI_T_pvar_start(s, ph));
            T_EXPECT(MPI_T_ERR_PVAR_NO_STARTSTOP, MPI_T_pvar_stop(s, ph));
            did_startstop = 1;
        }
        if (ro && !did_readonly && n >= 1 && n < 100000) {
            void *buf = calloc((size_t)n, 8);
            T_EXPECT(MPI_T_ERR_PVAR_NO_WRITE, MPI_T_pvar_write(s, ph, buf));
            T_EXPECT(MPI_T_ERR_PVAR_NO_WRITE, MPI_T_pvar_reset(s, ph));
            free(buf);
            did_readonly = 1;
        }
        T_CALL(MPI_T_pvar_handle_free(s, &ph));
        MTEST_CHECK(ph == MPI_T_PVAR_HANDLE_NULL, "handle not set to MPI_T_PVAR_HANDLE_NULL");
    }
    if (oxmpi) {
        MTEST_CHECK(did_startstop && did_readonly && did_session,
                    "oxmpi has continuous and read-only variables");
        /* A variable bound to a communicator needs a valid one. */
        int ip = mpit_pvar("p2p_messages_sent", MPI_T_PVAR_CLASS_COUNTER);
        MPI_Comm null = MPI_COMM_NULL;
        T_EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_handle_alloc(s, ip, &null, &ph, &n));
        T_EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_handle_alloc(s, ip, NULL, &ph, &n));
        /* The enumeration item range. */
        e = MPI_T_ENUM_NULL;
        T_CALL(MPI_T_cvar_get_info(mpit_cvar("OXMPI_BIND"), NULL, NULL, NULL, NULL, &e, NULL,
                                   NULL, NULL, NULL));
        T_EXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_enum_get_item(e, -1, &x, NULL, &len));
    }
    T_CALL(MPI_T_pvar_session_free(&s));
    T_CALL(MPI_T_pvar_session_free(&s2));
    T_CALL(MPI_T_finalize());
    return mtest_finalize();
}
