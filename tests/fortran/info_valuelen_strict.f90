! MPI_Info_get with VALUELEN shorter than the value: the value is cut to VALUELEN
! characters (MPI-4.1 section 10), not an error.
! Strict: MPICH 4.0.2 fails the call ("Value is too long").
program info_valuelen_strict
  use mpi
  use testutil
  implicit none
  integer :: ierr, rank, inf
  logical :: flag
  character(len=16) :: value

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Info_create(inf, ierr)
  call MPI_Info_set(inf, 'color', 'dark blue', ierr)
  value = 'junk'
  call MPI_Info_get(inf, 'color', 4, value, flag, ierr)
  if (ierr /= MPI_SUCCESS .or. .not. flag .or. value /= 'dark') then
    print *, 'MPI_Info_get with VALUELEN 4: ', ierr, flag, value
    errs = errs + 1
  end if
  call MPI_Info_free(inf, ierr)
  call report()
  call MPI_Finalize(ierr)
end program info_valuelen_strict
