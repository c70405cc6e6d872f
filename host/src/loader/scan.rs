//! One scan of the folder: list it, read what settled (on a thread per core,
//! see `sources`), load what changed, keep what failed to reload, drop what
//! is gone.

use super::*;

impl PluginFolder {
    /// Brings the loaded plugins in line with the folder. A file that fails is
    /// logged and skipped; the others load, concurrently.
    pub async fn scan(&mut self, settled: &dyn Settled) -> Result<ScanReport, FolderError> {
        let mut report = ScanReport::default();
        let mut claimed: BTreeMap<String, PathBuf> = BTreeMap::new();
        let mut jobs = Vec::new();
        // Files to read: each path, its `--plugin` reference, name and manifest.
        let mut pending = Vec::new();
        // `--plugin` references first: named on the command line, they win a
        // name clash with a file.
        let mut entries: Vec<(PathBuf, Option<Reference>)> = self
            .references
            .iter()
            .map(|(name, reference)| (reference_label(name, reference), Some(reference.clone())))
            .collect();
        entries.extend(component_files(&self.dir)?.into_iter().map(|p| (p, None)));
        for (path, given) in entries {
            let (name, modified) = if let Some(reference) = &given {
                let name = self
                    .references
                    .iter()
                    .find(|(_, r)| r == reference)
                    .map(|(name, _)| name.clone())
                    .unwrap_or_default();
                (name, None)
            } else {
                let modified = match regular_file(&path) {
                    Ok(Some(modified)) => modified,
                    // Deleted since the folder was listed.
                    Ok(None) => continue,
                    Err(error) => {
                        self.report_once(&path, &error);
                        continue;
                    }
                };
                let stem = path.file_stem().unwrap_or_default().to_string_lossy();
                match naming::plugin_name(&stem) {
                    Ok(name) => (name, Some(modified)),
                    Err(error) => {
                        self.report_once(&path, &FileError::from(error));
                        continue;
                    }
                }
            };
            if let Some(taken_by) = claimed.get(&name) {
                let error = FileError::DuplicateName {
                    name,
                    taken_by: taken_by.clone(),
                };
                self.report_once(&path, &error);
                continue;
            }
            claimed.insert(name.clone(), path.clone());

            let manifest_path = match &given {
                Some(_) => self.dir.join(format!("{name}.toml")),
                None => manifest::manifest_path(&path),
            };
            let file_settled = modified.is_none_or(|modified| settled.settled(&path, modified));
            if !file_settled || !manifest_settled(settled, &manifest_path) {
                report.deferred.push(path);
                continue;
            }
            pending.push((path, given, name, manifest_path));
        }

        let reads: Vec<_> = pending
            .iter()
            .map(|(path, given, ..)| (path.as_path(), given.as_ref()))
            .collect();
        let found = sources::read_all(&reads, self.local_trust.as_ref());
        for ((path, _, name, manifest_path), found) in pending.into_iter().zip(found) {
            let found = match found {
                Ok(found) => found,
                Err(error) => {
                    self.note(&path, &name, &error);
                    report.failed.push(path);
                    continue;
                }
            };
            let bytes = match self.component_bytes(&path, found).await {
                Ok(Some(bytes)) => bytes,
                Ok(None) => {
                    report.deferred.push(path);
                    continue;
                }
                Err(error) => {
                    self.note(&path, &name, &error);
                    report.failed.push(path);
                    continue;
                }
            };
            // Read once: the fingerprint and the settings come from the same bytes.
            let manifest = manifest::read(&manifest_path);
            let fingerprint = Fingerprint {
                component: bytes.hash(),
                manifest: match &manifest {
                    Ok(None) => ManifestPrint::Absent,
                    Ok(Some(text)) => ManifestPrint::Bytes(ContentHash::of(text)),
                    Err(_) => ManifestPrint::Unreadable,
                },
            };
            let unchanged = self
                .loaded
                .get(&name)
                .is_some_and(|l| l.path == path && l.fingerprint == fingerprint);
            if unchanged || self.failed.get(&path) == Some(&Some(fingerprint)) {
                continue;
            }
            let runtime = self.runtime.clone();
            jobs.push(async move {
                let result = match manifest {
                    Ok(manifest) => {
                        load_file(&runtime, &name, &manifest_path, manifest.as_deref(), bytes).await
                    }
                    Err(error) => Err(error.into()),
                };
                (name, path, fingerprint, result)
            });
        }

        for (name, path, fingerprint, result) in futures::future::join_all(jobs).await {
            match result {
                Ok(LoadedFile {
                    plugin,
                    naming,
                    scopes,
                    secret_fields,
                    tasks,
                }) => {
                    tracing::info!(
                        plugin = plugin.name(),
                        tools = plugin.tools().len(),
                        file = %path.display(),
                        "plugin loaded"
                    );
                    self.failed.remove(&path);
                    self.loaded.insert(
                        name.clone(),
                        Loaded {
                            path,
                            fingerprint,
                            plugin: Arc::new(plugin),
                            naming,
                            scopes,
                            secret_fields: secret_fields.into(),
                            tasks,
                        },
                    );
                    report.loaded.push(name);
                }
                Err(error) => {
                    let keeps = if self.loaded.contains_key(&name) {
                        "; the previous version keeps serving"
                    } else {
                        ""
                    };
                    tracing::error!(file = %path.display(), "plugin not loaded: {error}{keeps}");
                    self.failed.insert(path.clone(), Some(fingerprint));
                    report.failed.push(path);
                }
            }
        }

        let gone: Vec<String> = self
            .loaded
            .keys()
            .filter(|name| !claimed.contains_key(*name))
            .cloned()
            .collect();
        for name in gone {
            if let Some(old) = self.loaded.remove(&name) {
                tracing::info!(plugin = %name, file = %old.path.display(), "plugin removed");
            }
            report.removed.push(name);
        }
        // `symlink_metadata`: a symlink loop is still there, and still reported.
        let labels: Vec<PathBuf> = self
            .references
            .iter()
            .map(|(name, reference)| reference_label(name, reference))
            .collect();
        let there =
            |path: &PathBuf| labels.contains(path) || std::fs::symlink_metadata(path).is_ok();
        self.failed.retain(|path, _| there(path));
        self.noted.retain(|path, _| there(path));
        Ok(report)
    }
}
