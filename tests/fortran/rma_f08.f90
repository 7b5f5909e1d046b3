! One-sided communication through mpi_f08: MPI_Win_allocate returning TYPE(C_PTR), fence
! and passive-target (lock / unlock) epochs, MPI_Win_shared_query on a shared window,
! and typed window handles.
program rma_f08
  use mpi_f08
  use testutil
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer, c_associated
  implicit none
  type(MPI_Win) :: win, swin
  type(MPI_Comm) :: node
  type(c_ptr) :: base, qbase
  integer, pointer :: mem(:), q(:)
  integer :: rank, nprocs, next, prev, isz, src(2), disp_unit, nrank
  integer(kind=MPI_ADDRESS_KIND) :: sz, disp, qsize
  logical :: flag

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  next = mod(rank + 1, nprocs)
  prev = mod(rank + nprocs - 1, nprocs)
  call MPI_Type_size(MPI_INTEGER, isz)

  sz = 4 * isz
  call MPI_Win_allocate(sz, isz, MPI_INFO_NULL, MPI_COMM_WORLD, base, win)
  call check(c_associated(base) .and. win /= MPI_WIN_NULL, 'MPI_Win_allocate')
  call c_f_pointer(base, mem, [4])
  mem = -1
  call MPI_Win_fence(0, win)
  src = [rank, rank + 50]
  disp = 1
  call MPI_Put(src, 2, MPI_INTEGER, next, disp, 2, MPI_INTEGER, win)
  call MPI_Win_fence(0, win)
  call check(mem(1) == -1 .and. mem(2) == prev .and. mem(3) == prev + 50, 'MPI_Put (fence)')
  call MPI_Win_fence(MPI_MODE_NOSUCCEED, win)

  ! Passive target: each rank adds to slot 4 of rank 0 under an exclusive lock.
  if (rank == 0) mem(4) = 0
  call MPI_Barrier(MPI_COMM_WORLD)
  disp = 3
  src(1) = rank + 1
  call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win)
  call MPI_Accumulate(src, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, MPI_SUM, win)
  call MPI_Win_unlock(0, win)
  call MPI_Barrier(MPI_COMM_WORLD)
  src = -1
  call MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win)
  call MPI_Get(src, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, win)
  call MPI_Win_flush(0, win)
  call check(src(1) == nprocs * (nprocs + 1) / 2, 'MPI_Accumulate / MPI_Get (lock)')
  call MPI_Win_unlock(0, win)
  call MPI_Win_free(win)
  call check(win == MPI_WIN_NULL, 'MPI_Win_free')

  ! A shared window on the node: each rank sees rank 0's segment directly.
  call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, node)
  call MPI_Comm_rank(node, nrank)
  sz = isz
  call MPI_Win_allocate_shared(sz, isz, MPI_INFO_NULL, node, base, swin)
  call c_f_pointer(base, mem, [1])
  mem(1) = nrank + 1000
  call MPI_Win_shared_query(swin, 0, qsize, disp_unit, qbase)
  call check(qsize == isz .and. disp_unit == isz .and. c_associated(qbase), 'MPI_Win_shared_query')
  call MPI_Win_fence(0, swin)
  call c_f_pointer(qbase, q, [1])
  call check(q(1) == 1000, 'load from the shared segment of rank 0')
  call MPI_Win_fence(0, swin)
  call MPI_Win_free(swin)
  call MPI_Comm_free(node)

  call report()
  call MPI_Finalize()
end program rma_f08
