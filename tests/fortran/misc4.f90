! MPI-3/4 calls of the mpi module outside communication: MPI_Comm_dup_with_info and
! MPI_Comm_get_info, MPI_Comm_get_parent (no parent), MPI_Comm_disconnect,
! MPI_Info_create_env, MPI_Alloc_mem returning a TYPE(C_PTR), MPI_Type_create_f90_integer
! and MPI_Type_create_f90_complex, user error classes and codes, and name publishing
! (the port name read back through a CHARACTER longer than it, blank-padded).
program misc4
  use mpi
  use testutil
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer, c_associated
  implicit none
  integer :: ierr, rank, dup, info, used, parent, env, nkeys, t, sz
  integer :: eclass, ecode, len, rlen
  integer(kind=MPI_ADDRESS_KIND) :: bytes
  type(c_ptr) :: p
  integer, pointer :: mem(:)
  character(len=MPI_MAX_INFO_VAL) :: value
  character(len=MPI_MAX_ERROR_STRING) :: msg
  character(len=MPI_MAX_PORT_NAME) :: port
  character(len=32) :: svc
  logical :: flag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)

  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'mpi_assert_no_any_tag', 'true', ierr)
  call MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, dup, ierr)
  call check(ierr == MPI_SUCCESS .and. dup /= MPI_COMM_NULL, 'MPI_Comm_dup_with_info')
  call MPI_Comm_get_info(dup, used, ierr)
  call MPI_Info_get(used, 'mpi_assert_no_any_tag', MPI_MAX_INFO_VAL, value, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. (.not. flag .or. value == 'true'), 'MPI_Comm_get_info')
  call MPI_Info_free(used, ierr)
  call MPI_Info_free(info, ierr)
  call MPI_Comm_disconnect(dup, ierr)
  call check(ierr == MPI_SUCCESS .and. dup == MPI_COMM_NULL, 'MPI_Comm_disconnect')

  call MPI_Comm_get_parent(parent, ierr)
  call check(parent == MPI_COMM_NULL, 'MPI_Comm_get_parent without a parent')

  call MPI_Info_create_env(env, ierr)
  call MPI_Info_get_nkeys(env, nkeys, ierr)
  call check(ierr == MPI_SUCCESS .and. nkeys >= 0, 'MPI_Info_create_env')
  call MPI_Info_free(env, ierr)

  bytes = 64
  call MPI_Alloc_mem(bytes, MPI_INFO_NULL, p, ierr)
  call check(ierr == MPI_SUCCESS .and. c_associated(p), 'MPI_Alloc_mem')
  call c_f_pointer(p, mem, [16])
  mem = 3
  call check(sum(mem) == 48, 'memory of MPI_Alloc_mem')
  call MPI_Free_mem(mem, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Free_mem')

  call MPI_Type_create_f90_integer(9, t, ierr)
  call MPI_Type_size(t, sz, ierr)
  call check(ierr == MPI_SUCCESS .and. sz >= 4, 'MPI_Type_create_f90_integer')
  call MPI_Type_create_f90_complex(6, 30, t, ierr)
  call MPI_Type_size(t, sz, ierr)
  call check(ierr == MPI_SUCCESS .and. sz == 8, 'MPI_Type_create_f90_complex')

  call MPI_Add_error_class(eclass, ierr)
  call MPI_Add_error_code(eclass, ecode, ierr)
  call MPI_Add_error_string(ecode, 'a Fortran error', ierr)
  call MPI_Error_string(ecode, msg, len, ierr)
  call check(msg == 'a Fortran error' .and. len == 15, 'user error string')
  call MPI_Error_class(ecode, rlen, ierr)
  call check(rlen == eclass, 'user error class')


  write (svc, '(a, i0)') 'oxmpi-fortran-svc-', rank
  call MPI_Publish_name(svc, MPI_INFO_NULL, 'port-of-' // svc, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Publish_name')
  port = '?'
  call MPI_Lookup_name(svc, MPI_INFO_NULL, port, ierr)
  call check(ierr == MPI_SUCCESS .and. port == 'port-of-' // svc, 'MPI_Lookup_name')
  call MPI_Unpublish_name(svc, MPI_INFO_NULL, 'port-of-' // svc, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Unpublish_name')

  call report()
  call MPI_Finalize(ierr)
end program misc4
