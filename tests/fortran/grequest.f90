! Generalized requests with callbacks written in Fortran (mpi module): the query
! callback fills the status, the free callback runs once when the request is freed, the
! cancel callback gets LOGICAL complete; each sees the INTEGER(KIND=MPI_ADDRESS_KIND)
! extra state given to MPI_GREQUEST_START.
module greq_cb
  use mpi
  use testutil
  implicit none
  integer :: queries = 0, frees = 0, cancels = 0
  integer(kind=MPI_ADDRESS_KIND) :: seen = -1
  logical :: seen_complete = .false.
contains
  subroutine query_fn(extra_state, status, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: status(MPI_STATUS_SIZE), ierror
    queries = queries + 1
    seen = extra_state
    call MPI_Status_set_elements(status, MPI_INTEGER, 3, ierror)
    call MPI_Status_set_cancelled(status, .false., ierror)
    status(MPI_SOURCE) = 4
    status(MPI_TAG) = 44
    ierror = MPI_SUCCESS
  end subroutine query_fn

  subroutine free_fn(extra_state, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: ierror
    frees = frees + 1
    seen = extra_state
    ierror = MPI_SUCCESS
  end subroutine free_fn

  subroutine cancel_fn(extra_state, complete, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    logical :: complete
    integer :: ierror
    cancels = cancels + 1
    seen_complete = complete
    ierror = MPI_SUCCESS
  end subroutine cancel_fn
end module greq_cb

program grequest
  use mpi
  use greq_cb
  implicit none
  integer :: ierr, req, status(MPI_STATUS_SIZE), count, rank
  integer(kind=MPI_ADDRESS_KIND) :: extra
  logical :: flag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  extra = 123456789012_MPI_ADDRESS_KIND
  call MPI_Grequest_start(query_fn, free_fn, cancel_fn, extra, req, ierr)
  call check(ierr == MPI_SUCCESS .and. req /= MPI_REQUEST_NULL, 'MPI_Grequest_start')
  call MPI_Test(req, flag, status, ierr)
  call check(.not. flag .and. queries == 0, 'not complete before MPI_Grequest_complete')
  call MPI_Grequest_complete(req, ierr)
  call MPI_Wait(req, status, ierr)
  call check(req == MPI_REQUEST_NULL, 'request freed by MPI_Wait')
  call check(queries == 1 .and. frees == 1 .and. seen == extra, 'query and free called')
  call MPI_Get_count(status, MPI_INTEGER, count, ierr)
  call check(count == 3 .and. status(MPI_SOURCE) == 4 .and. status(MPI_TAG) == 44, 'status from query_fn')

  ! Cancelled before completion: cancel_fn sees complete = .false.
  extra = 7
  call MPI_Grequest_start(query_fn, free_fn, cancel_fn, extra, req, ierr)
  call MPI_Cancel(req, ierr)
  call check(cancels == 1 .and. .not. seen_complete, 'cancel_fn with complete false')
  call MPI_Grequest_complete(req, ierr)
  call MPI_Wait(req, status, ierr)
  call check(frees == 2 .and. seen == 7, 'second request freed')

  call report()
  call MPI_Finalize(ierr)
end program grequest
