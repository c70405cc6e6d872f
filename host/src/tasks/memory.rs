//! The in-memory task store: a map behind one lock, bounded in number, each
//! record gone once its time to live has passed (never before: a client may
//! poll a finished task until then).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use super::{CreateError, TaskId, TaskRecord, TaskStore, Transition, TransitionError};

/// Task records of this process.
#[derive(Debug)]
pub struct MemoryStore {
    max: usize,
    records: Mutex<HashMap<TaskId, TaskRecord>>,
}

impl MemoryStore {
    /// A store of at most `max` unexpired records.
    pub fn new(max: usize) -> Self {
        Self {
            max,
            records: Mutex::default(),
        }
    }

    fn records(&self) -> std::sync::MutexGuard<'_, HashMap<TaskId, TaskRecord>> {
        self.records.lock().expect("task store lock")
    }
}

/// Removes the expired records of `records`, returning their ids.
fn purge(records: &mut HashMap<TaskId, TaskRecord>, now: Instant) -> Vec<TaskId> {
    let expired: Vec<TaskId> = records
        .values()
        .filter(|r| r.expires <= now)
        .map(|r| r.id.clone())
        .collect();
    for id in &expired {
        records.remove(id);
    }
    expired
}

impl TaskStore for MemoryStore {
    fn create(&self, record: TaskRecord) -> Result<(), CreateError> {
        let mut records = self.records();
        if records.len() >= self.max {
            purge(&mut records, Instant::now());
        }
        if records.len() >= self.max {
            return Err(CreateError::Full { max: self.max });
        }
        records.insert(record.id.clone(), record);
        Ok(())
    }

    fn get(&self, id: &str) -> Option<TaskRecord> {
        let mut records = self.records();
        let record = records.get(id)?;
        if record.expires <= Instant::now() {
            records.remove(id);
            return None;
        }
        Some(record.clone())
    }

    fn update(
        &self,
        id: &str,
        transition: Transition,
    ) -> Result<Option<TaskRecord>, TransitionError> {
        let mut records = self.records();
        let Some(record) = records.get_mut(id) else {
            return Ok(None);
        };
        if record.expires <= Instant::now() {
            records.remove(id);
            return Ok(None);
        }
        record.apply(transition)?;
        Ok(Some(record.clone()))
    }

    fn purge_expired(&self) -> Vec<TaskId> {
        purge(&mut self.records(), Instant::now())
    }

    fn len(&self) -> usize {
        let mut records = self.records();
        purge(&mut records, Instant::now());
        records.len()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::Map;

    use super::*;
    use crate::tasks::{Status, new_task_id};

    fn record(ttl: Duration) -> TaskRecord {
        TaskRecord::new(new_task_id(None), ttl, None)
    }

    #[test]
    fn a_record_is_kept_until_its_ttl_and_gone_after() {
        let store = MemoryStore::new(10);
        let task = record(Duration::from_millis(200));
        let id = task.id.clone();
        store.create(task).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(store.get(&id).unwrap().status(), Status::Working);
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(store.get(&id), None);
        assert_eq!(
            store.update(&id, Transition::Cancel),
            Ok(None),
            "an expired task cannot change"
        );
        assert!(store.is_empty());
    }

    #[test]
    fn the_bound_refuses_a_task_past_it_until_one_expires() {
        let store = MemoryStore::new(2);
        store.create(record(Duration::from_millis(100))).unwrap();
        store.create(record(Duration::from_secs(60))).unwrap();
        assert_eq!(
            store.create(record(Duration::from_secs(60))),
            Err(CreateError::Full { max: 2 })
        );
        assert_eq!(
            CreateError::Full { max: 2 }.to_string(),
            "Too many tasks: this server keeps at most 2 unexpired tasks; retry once some have expired"
        );
        std::thread::sleep(Duration::from_millis(150));
        store.create(record(Duration::from_secs(60))).unwrap();
        assert_eq!(store.len(), 2);
    }

    #[test]
    fn transitions_go_through_the_state_machine() {
        let store = MemoryStore::new(10);
        let task = record(Duration::from_secs(60));
        let id = task.id.clone();
        store.create(task).unwrap();
        let done = store
            .update(&id, Transition::Complete { result: Map::new() })
            .unwrap()
            .unwrap();
        assert_eq!(done.status(), Status::Completed);
        assert_eq!(
            store.update(&id, Transition::Cancel),
            Err(TransitionError::Terminal(Status::Completed))
        );
        assert_eq!(store.update("nope", Transition::Cancel), Ok(None));
    }

    #[test]
    fn purge_names_the_expired_tasks() {
        let store = MemoryStore::new(10);
        let short = record(Duration::from_millis(10));
        let id = short.id.clone();
        store.create(short).unwrap();
        store.create(record(Duration::from_secs(60))).unwrap();
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(store.purge_expired(), vec![id]);
        assert_eq!(store.len(), 1);
    }
}
