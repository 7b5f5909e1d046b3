! Sessions through mpi_f08: MPI_Session_init without MPI_Init, the process sets (the
! name's length asked first, then the name; a CHARACTER shorter than the name gets its
! first characters), a group and a communicator from mpi://WORLD, MPI_Info_get_string's
! in-out length, an error handler on the session, MPI_Session_finalize. _strict: MPICH
! 4.0.2 neither blank-pads the name nor returns its Fortran length, and its
! MPI_Group_from_session_pset aborts on an unknown name under MPI_ERRORS_RETURN.
program session_f08_strict
  use mpi_f08
  use testutil
  implicit none
  type(MPI_Session) :: session
  type(MPI_Group) :: group
  type(MPI_Comm) :: comm
  type(MPI_Info) :: info
  type(MPI_Errhandler) :: eh
  integer :: ierr, npsets, i, len, rank, size, gsize, total
  logical :: flag, found_world, found_self
  character(len=64) :: pname
  character(len=4) :: short
  character(len=32) :: value

  call MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, session, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Session_init')
  call MPI_Session_get_num_psets(session, MPI_INFO_NULL, npsets)
  call check(npsets >= 2, 'MPI_Session_get_num_psets')
  found_world = .false.
  found_self = .false.
  do i = 0, npsets - 1
    len = 0
    call MPI_Session_get_nth_pset(session, MPI_INFO_NULL, i, len, pname)
    call check(len > 0 .and. len <= 64, 'pset name length query')
    pname = '?'
    call MPI_Session_get_nth_pset(session, MPI_INFO_NULL, i, len, pname)
    if (pname(1:len) == 'mpi://WORLD') found_world = .true.
    if (pname(1:len) == 'mpi://SELF') found_self = .true.
    call check(len_trim(pname) == len, 'pset name blank-padded')
    if (pname(1:len) == 'mpi://WORLD') then
      ! A CHARACTER shorter than the name: its length filled, nothing past it.
      len = 64
      short = '####'
      call MPI_Session_get_nth_pset(session, MPI_INFO_NULL, i, len, short)
      call check(short == 'mpi:', 'short CHARACTER filled to its length')
    end if
  end do
  call check(found_world .and. found_self, 'mpi://WORLD and mpi://SELF listed')

  call MPI_Session_get_pset_info(session, 'mpi://WORLD', info)
  len = 32
  value = ''
  call MPI_Info_get_string(info, 'mpi_size', len, value, flag)
  call check(flag, 'mpi_size of mpi://WORLD')
  read (value, *) gsize
  call check(len == len_trim(value), 'MPI_Info_get_string length')
  len = 0
  call MPI_Info_get_string(info, 'mpi_size', len, value, flag)
  call check(flag .and. len == len_trim(value), 'MPI_Info_get_string length query')
  call MPI_Info_get_string(info, 'no such key', len, value, flag)
  call check(.not. flag, 'MPI_Info_get_string absent key')
  call MPI_Info_free(info)

  call MPI_Group_from_session_pset(session, 'mpi://WORLD', group)
  call MPI_Group_size(group, size)
  call check(size == gsize, 'group of mpi://WORLD')
  call MPI_Comm_create_from_group(group, 'org.oxmpi.fortran', MPI_INFO_NULL, MPI_ERRORS_RETURN, comm)
  call MPI_Comm_rank(comm, rank)
  call MPI_Comm_size(comm, size)
  call check(size == gsize, 'MPI_Comm_create_from_group size')
  call MPI_Group_free(group)

  call MPI_Session_get_errhandler(session, eh)
  call check(eh == MPI_ERRORS_RETURN, 'MPI_Session_get_errhandler')
  call MPI_Errhandler_free(eh)
  ! An invalid process set name: an error returned, not a crash.
  call MPI_Group_from_session_pset(session, 'mpi://NO-SUCH-SET', group, ierr)
  call check(ierr /= MPI_SUCCESS, 'unknown process set')

  call MPI_Allreduce(errs, total, 1, MPI_INTEGER, MPI_SUM, comm)
  call MPI_Comm_free(comm)
  call MPI_Session_finalize(session, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Session_finalize')
  if (rank == 0) then
    if (total == 0 .and. errs == 0) then
      print '(a)', ' No Errors'
    else
      print *, 'Found ', total, ' errors'
    end if
  end if
end program session_f08_strict
