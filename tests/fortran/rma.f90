! One-sided communication through the mpi module: a window on a Fortran array with
! fence epochs (MPI_Put, MPI_Get, MPI_Accumulate), passive target with MPI_Win_lock
! (MPI_Fetch_and_op, MPI_Compare_and_swap, MPI_Rget), a window that MPI_Win_allocate
! allocates (its base as a TYPE(C_PTR)), the predefined window attributes as
! INTEGER(KIND=MPI_ADDRESS_KIND) values, window names, and MPI_Aint_add / MPI_Aint_diff
! on displacements.
program rma
  use mpi
  use testutil
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer, c_loc, c_associated
  implicit none
  integer :: ierr, rank, nprocs, win, win2, next, prev, i, req, len, isz
  ! Window memory and the buffers of one-sided calls (MPI-4.1 section 19.1.17).
  integer, target, asynchronous :: buf(4)
  integer, asynchronous :: got(4), one, old, cmp, res, src(2), newv
  integer(kind=MPI_ADDRESS_KIND) :: winsize, attr, disp, a1, a2
  logical :: flag
  type(c_ptr) :: base
  integer, pointer :: mem(:)
  character(len=MPI_MAX_OBJECT_NAME) :: name

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  next = mod(rank + 1, nprocs)
  prev = mod(rank + nprocs - 1, nprocs)
  call MPI_Type_size(MPI_INTEGER, isz, ierr)

  buf = -1
  winsize = 4 * isz
  call MPI_Win_create(buf, winsize, isz, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_Win_get_attr(win, MPI_WIN_SIZE, attr, flag, ierr)
  call check(flag .and. attr == winsize, 'MPI_WIN_SIZE')
  call MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, attr, flag, ierr)
  call check(flag .and. attr == isz, 'MPI_WIN_DISP_UNIT')
  call MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, attr, flag, ierr)
  call check(flag .and. attr == MPI_WIN_FLAVOR_CREATE, 'MPI_WIN_CREATE_FLAVOR')
  call MPI_Get_address(buf(1), a1, ierr)
  call MPI_Get_address(buf(3), a2, ierr)
  call check(MPI_Aint_diff(a2, a1) == 2 * isz, 'MPI_Aint_diff')
  call check(MPI_Aint_add(a1, int(2 * isz, MPI_ADDRESS_KIND)) == a2, 'MPI_Aint_add')
  call MPI_Win_set_name(win, 'ring window', ierr)
  call MPI_Win_get_name(win, name, len, ierr)
  call check(name == 'ring window' .and. len == 11, 'MPI_Win_get_name')

  ! Fence: each rank puts its rank into its successor's buf(1:2), then accumulates.
  call MPI_Win_fence(0, win, ierr)
  disp = 0
  src = [rank, rank * 10]
  call MPI_Put(src, 2, MPI_INTEGER, next, disp, 2, MPI_INTEGER, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  call check(buf(1) == prev .and. buf(2) == prev * 10 .and. buf(3) == -1, 'MPI_Put')
  buf(3) = 0
  call MPI_Win_fence(0, win, ierr)
  disp = 2
  one = rank + 1
  do i = 0, nprocs - 1
    call MPI_Accumulate(one, 1, MPI_INTEGER, i, disp, 1, MPI_INTEGER, MPI_SUM, win, ierr)
  end do
  call MPI_Win_fence(0, win, ierr)
  call check(buf(3) == nprocs * (nprocs + 1) / 2, 'MPI_Accumulate')
  call MPI_Win_fence(0, win, ierr)
  got = -7
  disp = 0
  call MPI_Get(got, 3, MPI_INTEGER, prev, disp, 3, MPI_INTEGER, win, ierr)
  call MPI_Win_fence(MPI_MODE_NOSUCCEED, win, ierr)
  call check(got(1) == mod(prev + nprocs - 1, nprocs) .and. got(3) == nprocs * (nprocs + 1) / 2 &
             .and. got(4) == -7, 'MPI_Get')

  ! Passive target: a counter at rank 0, buf(4).
  if (rank == 0) buf(4) = 0
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  disp = 3
  one = 1
  call MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win, ierr)
  call MPI_Fetch_and_op(one, old, MPI_INTEGER, 0, disp, MPI_SUM, win, ierr)
  call MPI_Win_unlock(0, win, ierr)
  call check(old >= 0 .and. old < nprocs, 'MPI_Fetch_and_op')
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win, ierr)
  cmp = nprocs
  newv = -5
  call MPI_Compare_and_swap(newv, cmp, res, MPI_INTEGER, 0, disp, win, ierr)
  call MPI_Win_unlock(0, win, ierr)
  call check(res == nprocs .or. res == -5, 'MPI_Compare_and_swap')
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Win_lock_all(0, win, ierr)
  got = 0
  call MPI_Rget(got, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, win, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call MPI_Win_unlock_all(win, ierr)
  call check(got(1) == -5, 'MPI_Rget after MPI_Compare_and_swap')
  call MPI_Win_free(win, ierr)
  call check(win == MPI_WIN_NULL, 'MPI_Win_free')

  ! A window the library allocates: its base as a C pointer.
  call MPI_Win_allocate(winsize, isz, MPI_INFO_NULL, MPI_COMM_WORLD, base, win2, ierr)
  call check(ierr == MPI_SUCCESS .and. c_associated(base), 'MPI_Win_allocate')
  call c_f_pointer(base, mem, [4])
  mem = rank
  call MPI_Win_get_attr(win2, MPI_WIN_BASE, attr, flag, ierr)
  call check(flag .and. attr == transfer(base, attr), 'MPI_WIN_BASE')
  call MPI_Win_fence(0, win2, ierr)
  disp = 1
  src(1) = rank + 100
  call MPI_Put(src, 1, MPI_INTEGER, next, disp, 1, MPI_INTEGER, win2, ierr)
  call MPI_Win_fence(0, win2, ierr)
  call check(mem(1) == rank .and. mem(2) == prev + 100, 'Put into MPI_Win_allocate memory')
  call MPI_Win_free(win2, ierr)

  call report()
  call MPI_Finalize(ierr)
end program rma
