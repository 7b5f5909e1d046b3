! Errors raised under a Fortran call name that call: with MPI_ERRORS_RETURN, a send
! with a negative count returns MPI_ERR_COUNT in IERROR, and its error string names
! MPI_SEND (the Fortran call), the argument and the value. oxmpi's wording is checked
! (MPICH names its C function), hence _strict.
program errname_strict
  use mpi
  use testutil
  implicit none
  integer :: ierr, errclass, len, rank
  character(len=MPI_MAX_ERROR_STRING) :: msg
  character(len=8) :: short

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Send(rank, -1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, ierr)
  call MPI_Error_class(ierr, errclass, ierr)
  if (errclass /= MPI_ERR_COUNT) then
    errs = errs + 1
    print *, 'class ', errclass, ' is not MPI_ERR_COUNT'
  end if
  call MPI_Send(rank, -1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, ierr)
  call MPI_Error_string(ierr, msg, len, ierr)
  if (index(msg, 'MPI_SEND') == 0 .or. index(msg, '-1') == 0 .or. len /= len_trim(msg)) then
    errs = errs + 1
    print *, 'message: ', trim(msg)
  end if
  ! A CHARACTER shorter than the message: filled to its length, not overrun.
  call MPI_Send(rank, -1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, ierr)
  call MPI_Error_string(ierr, short, len, ierr)
  if (short /= msg(1:8)) then
    errs = errs + 1
    print *, 'short message: ', short
  end if
  call report()
  call MPI_Finalize(ierr)
end program errname_strict
