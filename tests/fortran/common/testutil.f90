! Shared helpers of the Fortran test programs, compiled by tests/fortran/run before
! them: a failure count, `check` and `fail` to record a failed check, and `report` to
! sum the failures and print " No Errors" from rank 0 of MPI_COMM_WORLD. It calls MPI
! through mpif.h's implicit interfaces, kept private, so programs of all three
! interfaces (mpif.h, the mpi module and mpi_f08) use it alike.
module testutil
  implicit none
  private
  include 'mpif.h'
  integer, public :: errs = 0
  public :: check, fail, report
contains
  ! Records a failure unless `ok`, naming the rank (when MPI is up) and `what`.
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) call fail(what)
  end subroutine check

  subroutine fail(what)
    character(len=*), intent(in) :: what
    logical :: up, down
    integer :: rank, ierr
    errs = errs + 1
    rank = -1
    call MPI_INITIALIZED(up, ierr)
    call MPI_FINALIZED(down, ierr)
    if (up .and. .not. down) call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
    print *, 'rank ', rank, ': check failed: ', what
  end subroutine fail

  ! Sums the failures of MPI_COMM_WORLD's ranks; rank 0 prints " No Errors" when there
  ! were none, else their number.
  subroutine report()
    integer :: total, rank, ierr
    call MPI_ALLREDUCE(errs, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
    if (rank == 0) then
      if (total == 0) then
        print '(a)', ' No Errors'
      else
        print *, 'Found ', total, ' errors'
      end if
    end if
  end subroutine report
end module testutil
