/* Stale and made-up MPI_T handles are detected (oxmpi promises this; MPICH
 * dereferences its handles, so a made-up one crashes there): a freed control-variable
 * handle, a freed or made-up performance-variable handle, a freed session
 * (MPI_T_ERR_INVALID_HANDLE / MPI_T_ERR_INVALID_SESSION), handles of one kind passed
 * as another, MPI_T_PVAR_ALL_HANDLES where one handle is needed (read, write,
 * readreset, free), and enumerations that do not exist; no event registration or
 * instance exists (MPI_T_ERR_INVALID_HANDLE). */
#include "mpit_util.h"

int main(int argc, char **argv)
{
    int provided, n, x = 0;
    unsigned long long buf[64] = {0};
    mtest_init(&argc, &argv);
    T_CALL(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));

    MPI_T_cvar_handle ch, ch_old;
    T_CALL(MPI_T_cvar_handle_alloc(0, NULL, &ch, &n));
    ch_old = ch;
    T_CALL(MPI_T_cvar_handle_free(&ch));
    T_EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_cvar_read(ch_old, buf));
    T_EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_cvar_write(ch_old, buf));
    T_EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_cvar_handle_free(&ch_old));
    T_EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_cvar_read(MPI_T_CVAR_HANDLE_NULL, buf));
    T_EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_cvar_read((MPI_T_cvar_handle)(size_t)0x1234, buf));

    MPI_T_pvar_session s, s_old;
    MPI_T_pvar_handle ph, ph_old;
    int ip = mpit_pvar("wait_blocked_time", MPI_T_PVAR_CLASS_TIMER);
    T_CALL(MPI_T_pvar_session_create(&s));
    T_CALL(MPI_T_pvar_handle_alloc(s, ip, NULL, &ph, &n));
    T_EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, buf));
    T_EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_write(s, MPI_T_PVAR_ALL_HANDLES, buf));
    T_EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_readreset(s, MPI_T_PVAR_ALL_HANDLES, buf));
    MPI_T_pvar_handle all = MPI_T_PVAR_ALL_HANDLES;
    T_EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_handle_free(s, &all));
    T_EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_read(s, MPI_T_PVAR_HANDLE_NULL, buf));
    /* A control-variable handle is not a performance-variable handle or a session. */
    T_CALL(MPI_T_cvar_handle_alloc(0, NULL, &ch, &n));
    T_EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_read(s, (MPI_T_pvar_handle)ch, buf));
    T_EXPECT(MPI_T_ERR_INVALID_SESSION, MPI_T_pvar_read((MPI_T_pvar_session)ch, ph, buf));
    T_EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_cvar_read((MPI_T_cvar_handle)ph, buf));
    T_EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_enum_get_info((MPI_T_enum)ch, &x, NULL, NULL));
    T_EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_enum_get_info(MPI_T_ENUM_NULL, &x, NULL, NULL));
    T_CALL(MPI_T_cvar_handle_free(&ch));

    ph_old = ph;
    T_CALL(MPI_T_pvar_handle_free(s, &ph));
    T_EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_read(s, ph_old, buf));
    T_EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_start(s, ph_old));
    T_EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_handle_free(s, &ph_old));

    /* Freeing a session frees its handles. */
    T_CALL(MPI_T_pvar_handle_alloc(s, ip, NULL, &ph, &n));
    s_old = s;
    T_CALL(MPI_T_pvar_session_free(&s));
    T_EXPECT(MPI_T_ERR_INVALID_SESSION, MPI_T_pvar_read(s_old, ph, buf));
    T_EXPECT(MPI_T_ERR_INVALID_SESSION, MPI_T_pvar_session_free(&s_old));
    T_CALL(MPI_T_pvar_session_create(&s));
    T_EXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_read(s, ph, buf));
    T_CALL(MPI_T_pvar_session_free(&s));

    /* No event registration or instance exists. */
    MPI_Info info;
    MPI_Count ts;
    T_EXPECT(MPI_T_ERR_INVALID_HANDLE,
             MPI_T_event_handle_get_info((MPI_T_event_registration)(size_t)0x10, &info));
    T_EXPECT(MPI_T_ERR_INVALID_HANDLE,
             MPI_T_event_get_timestamp((MPI_T_event_instance)(size_t)0x10, &ts));
    T_EXPECT(MPI_T_ERR_INVALID_HANDLE,
             MPI_T_event_handle_free((MPI_T_event_registration)(size_t)0x10, NULL, NULL));

    T_CALL(MPI_T_finalize());
    return mtest_finalize();
}
