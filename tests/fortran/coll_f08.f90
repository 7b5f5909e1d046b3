! Collectives through mpi_f08: reductions on Fortran types, MPI_IN_PLACE, a user
! operation with the mpi_f08 interface (TYPE(C_PTR) buffers by value), strings and
! Cartesian topologies with LOGICAL arguments.
module userops_f08
  use mpi_f08
  use testutil
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  implicit none
contains
  ! The larger absolute value, keeping its sign.
  subroutine absmax(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    integer :: i
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    do i = 1, len
      if (abs(a(i)) > abs(b(i))) b(i) = a(i)
    end do
  end subroutine absmax
end module userops_f08

program coll_f08
  use mpi_f08
  use userops_f08
  implicit none
  integer :: ierr, rank, nprocs, i, v(2), r(2), len, dims(2), coords(2)
  type(MPI_Op) :: op
  type(MPI_Comm) :: cart
  double precision :: dpair(2), dres(2)
  logical :: l, lres, periods(2)
  character(len=MPI_MAX_OBJECT_NAME) :: name

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)

  v = [rank, -rank * 2]
  call MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call check(v(1) == nprocs * (nprocs - 1) / 2 .and. v(2) == -nprocs * (nprocs - 1), 'IN_PLACE SUM')
  dpair = [dble(mod(rank + 1, nprocs)), dble(rank)]
  call MPI_Allreduce(dpair, dres, 1, MPI_2DOUBLE_PRECISION, MPI_MAXLOC, MPI_COMM_WORLD)
  call check(dres(1) == nprocs - 1 .and. dres(2) == max(nprocs - 2, 0), 'MAXLOC')
  l = rank == nprocs - 1
  call MPI_Allreduce(l, lres, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD)
  call check(lres, 'LOR')

  call MPI_Op_create(absmax, .true., op)
  v = [rank * (-1)**rank, 1]
  call MPI_Allreduce(v, r, 2, MPI_INTEGER, op, MPI_COMM_WORLD)
  call check(r(1) == (nprocs - 1) * (-1)**(nprocs - 1) .and. r(2) == 1, 'user op')
  call MPI_Op_free(op)
  call check(op == MPI_OP_NULL, 'MPI_Op_free')

  dims = 0
  call MPI_Dims_create(nprocs, 2, dims)
  periods = [.false., .true.]
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .true., cart)
  call MPI_Comm_set_name(cart, 'grid')
  call MPI_Comm_get_name(cart, name, len)
  call check(name == 'grid' .and. len == 4, 'names')
  periods = .false.
  call MPI_Cart_get(cart, 2, dims, periods, coords)
  call check(.not. periods(1) .and. periods(2), 'MPI_Cart_get periods')
  call MPI_Comm_free(cart)

  call report()
  call MPI_Finalize()
end program coll_f08
