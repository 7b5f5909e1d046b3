! Error handlers written in Fortran (MPI_Comm_create_errhandler): called with the
! communicator and the error code by reference; the call then returns that code in
! IERROR. Also MPI_ERRORS_RETURN, MPI_Comm_call_errhandler and user error classes and
! strings (CHARACTER in and out).
module handlers
  implicit none
  integer :: calls = 0, seen_comm = -1, seen_code = -1
contains
  subroutine record(comm, code)
    integer :: comm, code
    calls = calls + 1
    seen_comm = comm
    seen_code = code
  end subroutine record
end module handlers

program errhandler
  use mpi
  use testutil
  use handlers
  implicit none
  integer :: ierr, rank, nprocs, eh, eh2, cls, code, dup, len
  character(len=MPI_MAX_ERROR_STRING) :: msg

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Comm_create_errhandler(record, eh, ierr)
  call check(ierr == MPI_SUCCESS .and. eh /= MPI_ERRHANDLER_NULL, 'MPI_Comm_create_errhandler')
  call MPI_Comm_set_errhandler(dup, eh, ierr)
  call MPI_Comm_get_errhandler(dup, eh2, ierr)
  call check(eh2 == eh, 'MPI_Comm_get_errhandler')
  call MPI_Errhandler_free(eh2, ierr)

  ! A bad rank: the handler runs with the communicator and the code, which the call returns.
  call MPI_Send(rank, 1, MPI_INTEGER, nprocs + 3, 0, dup, ierr)
  call check(calls == 1, 'handler called once')
  call check(seen_comm == dup, 'handler got the communicator')
  call check(seen_code == ierr .and. ierr /= MPI_SUCCESS, 'handler got the code')
  call MPI_Error_class(ierr, cls, code)
  call check(cls == MPI_ERR_RANK, 'error class of a bad rank')
  call MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER, ierr)
  call check(calls == 2 .and. seen_code == MPI_ERR_OTHER, 'MPI_Comm_call_errhandler')

  ! A user error class, code and string.
  call MPI_Add_error_class(cls, ierr)
  call MPI_Add_error_code(cls, code, ierr)
  call MPI_Add_error_string(code, 'a Fortran error   ', ierr)
  call MPI_Error_string(code, msg, len, ierr)
  call check(msg == 'a Fortran error' .and. len == 15, 'MPI_Add_error_string')
  call MPI_Error_class(code, ierr, len)
  call check(ierr == cls, 'class of a user code')

  ! MPI_ERRORS_RETURN on the duplicate; the handler stays unused.
  call MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN, ierr)
  call MPI_Errhandler_free(eh, ierr)
  call check(eh == MPI_ERRHANDLER_NULL, 'MPI_Errhandler_free')
  call MPI_Recv(len, 1, MPI_INTEGER, 0, -5, dup, MPI_STATUS_IGNORE, ierr)
  call MPI_Error_class(ierr, cls, code)
  call check(cls == MPI_ERR_TAG .and. calls == 2, 'MPI_ERRORS_RETURN')
  call MPI_Comm_free(dup, ierr)
  call check(dup == MPI_COMM_NULL, 'MPI_Comm_free')

  call report()
  call MPI_Finalize(ierr)
end program errhandler
