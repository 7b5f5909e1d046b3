! MPI-4.1 calls of the mpi module: removing user error strings, codes and classes,
! MPI_Get_hw_resource_info and MPI_Type_get_value_index; and MPI_F_SYNC_REG (MPI-3).
! _strict: MPICH 4.0.2 lacks the MPI-4.1 calls, and its MPI_F_SYNC_REG crashes.
! mtest-abi: oxmpi-header (MPICH's Fortran library cannot link it)
program misc41_strict
  use mpi
  use testutil
  implicit none
  integer :: ierr, eclass, ecode, hw, nkeys, pair, sz, rc
  character(len=MPI_MAX_ERROR_STRING) :: msg
  integer :: len
  integer :: regs(3)

  call MPI_Init(ierr)
  call MPI_Add_error_class(eclass, ierr)
  call MPI_Add_error_code(eclass, ecode, ierr)
  call MPI_Add_error_string(ecode, 'temporary', ierr)
  call MPI_Remove_error_string(ecode, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Remove_error_string')
  call MPI_Error_string(ecode, msg, len, ierr)
  call check(msg /= 'temporary', 'string removed')
  call MPI_Remove_error_code(ecode, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Remove_error_code')
  call MPI_Remove_error_class(eclass, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Remove_error_class')
  ! Removing it again: an error returned (MPI_COMM_WORLD's handler is ERRORS_RETURN).
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Remove_error_class(eclass, rc)
  call check(rc /= MPI_SUCCESS, 'removing a removed class fails')

  call MPI_Get_hw_resource_info(hw, ierr)
  call MPI_Info_get_nkeys(hw, nkeys, ierr)
  call check(ierr == MPI_SUCCESS .and. nkeys >= 0, 'MPI_Get_hw_resource_info')
  call MPI_Info_free(hw, ierr)

  call MPI_Type_get_value_index(MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, pair, ierr)
  call check(pair == MPI_2DOUBLE_PRECISION, 'MPI_Type_get_value_index Fortran pair')
  call MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, pair, ierr)
  call check(pair == MPI_DOUBLE_INT, 'MPI_Type_get_value_index C pair')
  call MPI_Type_size(pair, sz, ierr)
  call check(sz == 12, 'size of MPI_DOUBLE_INT')
  ! No predefined pair: MPI_DATATYPE_NULL.
  call MPI_Type_get_value_index(MPI_DOUBLE_PRECISION, MPI_INTEGER, pair, ierr)
  call check(ierr == MPI_SUCCESS .and. pair == MPI_DATATYPE_NULL, 'no pair type')

  regs = 5
  call MPI_F_sync_reg(regs)
  call check(all(regs == 5), 'MPI_F_sync_reg')

  call report()
  call MPI_Finalize(ierr)
end program misc41_strict
