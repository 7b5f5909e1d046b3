//! Removal of shared-memory files a job leaves behind: every entry of `/dev/shm` whose
//! name starts with `oxmpi.<kvsname>` (the prefix the MPI library gives its segments).

use std::path::Path;

/// Removes the job's leftover files from `dir` (normally `/dev/shm`) and returns their
/// names.
pub fn remove_leftovers(dir: &Path, kvsname: &str) -> Vec<String> {
    let prefix = format!("oxmpi.{kvsname}");
    let mut removed = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return removed;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.starts_with(&prefix) && std::fs::remove_file(e.path()).is_ok() {
            removed.push(name.to_owned());
        }
    }
    removed.sort();
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_only_the_jobs_files() {
        let dir = std::env::temp_dir().join(format!("oxmpi-shm-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for n in [
            "oxmpi.job-1-aa.seg0",
            "oxmpi.job-1-aa",
            "oxmpi.job-2-bb.seg0",
            "other",
        ] {
            std::fs::write(dir.join(n), b"x").unwrap();
        }
        let removed = remove_leftovers(&dir, "job-1-aa");
        assert_eq!(removed, ["oxmpi.job-1-aa", "oxmpi.job-1-aa.seg0"]);
        assert!(dir.join("oxmpi.job-2-bb.seg0").exists());
        assert!(dir.join("other").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
