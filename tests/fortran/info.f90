! Info objects through the mpi module: CHARACTER keys and values in (trailing blanks
! dropped) and out (blank padded, cut to the Fortran length), LOGICAL flags.
program info
  use mpi
  use testutil
  implicit none
  integer :: ierr, rank, inf, dup, nkeys, vlen
  logical :: flag
  character(len=MPI_MAX_INFO_VAL) :: value
  character(len=MPI_MAX_INFO_KEY) :: key
  character(len=3) :: short

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Info_create(inf, ierr)
  call MPI_Info_set(inf, 'color   ', 'dark blue   ', ierr)
  call MPI_Info_set(inf, 'size', '42', ierr)
  call MPI_Info_get_nkeys(inf, nkeys, ierr)
  call check(nkeys == 2, 'MPI_Info_get_nkeys')
  value = 'junk'
  call MPI_Info_get(inf, 'color', MPI_MAX_INFO_VAL, value, flag, ierr)
  call check(flag .and. value == 'dark blue', 'MPI_Info_get')
  call MPI_Info_get_valuelen(inf, 'color', vlen, flag, ierr)
  call check(flag .and. vlen == 9, 'MPI_Info_get_valuelen')
  call MPI_Info_get(inf, 'color', MPI_MAX_INFO_VAL, short, flag, ierr)
  call check(flag .and. short == 'dar', 'MPI_Info_get into a short CHARACTER')
  call MPI_Info_get(inf, 'absent', MPI_MAX_INFO_VAL, value, flag, ierr)
  call check(.not. flag, 'MPI_Info_get of an absent key')
  call MPI_Info_get_nthkey(inf, 1, key, ierr)
  call check(key == 'size', 'MPI_Info_get_nthkey')
  call MPI_Info_dup(inf, dup, ierr)
  call MPI_Info_delete(inf, 'size', ierr)
  call MPI_Info_get_nkeys(inf, nkeys, ierr)
  call check(nkeys == 1, 'MPI_Info_delete')
  call MPI_Info_get(dup, 'size', MPI_MAX_INFO_VAL, value, flag, ierr)
  call check(flag .and. value == '42', 'MPI_Info_dup')
  call MPI_Info_free(inf, ierr)
  call MPI_Info_free(dup, ierr)
  call check(inf == MPI_INFO_NULL .and. dup == MPI_INFO_NULL, 'MPI_Info_free')

  call report()
  call MPI_Finalize(ierr)
end program info
