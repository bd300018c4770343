//! Deployment boundaries for plain manifest files.
//!
//! A kustomize render or a Helm chart is one environment already. Plain files under a scanned
//! path are not: a repository of examples or of several environments keeps unrelated sets side
//! by side, and joining them made units of a hundred unrelated workloads and thousands of
//! "defined more than once" warnings. So plain files are split here:
//! - each directory is a scope of its own;
//! - files of one directory that define the same object are alternatives (two environments,
//!   or two versions of an example), never a merge: each later definition goes to a variant
//!   scope of its own, named after its file;
//! - a scope whose HorizontalPodAutoscaler targets, or whose PodDisruptionBudget selects,
//!   workloads only another directory defines joins the nearest such directory, unless that
//!   would put one object in a scope twice;
//! - the directories under a path that a Flux Kustomization, or an Argo CD Application with
//!   `directory.recurse` (an ApplicationSet's too, as discovery expands it), of the scanned
//!   files deploys are one scope: that path is one deployment.
//!
//! A scanned path whose files form one scope keeps its scope as discovery made it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::discover::{Scope, ScopeKind};
use crate::manifest::{Body, DeployedPath, Object};
use crate::source::SourceMap;

/// One directory's files, or one variant of them.
struct Group {
    dir: PathBuf,
    /// The first file of a variant (0 is the directory's main set, named by the directory).
    variant_file: Option<PathBuf>,
    objects: Vec<usize>,
    /// Files a deployer's filters leave out of the directory it deploys: never joined to it.
    left_out: bool,
}

/// Split every `files` scope into its deployment boundaries; objects get their new scope
/// index and `scopes` is rebuilt (other scopes keep their order).
pub fn split_file_scopes(objects: &mut [Object], scopes: &mut Vec<Scope>, sources: &SourceMap) {
    let mut new_scopes: Vec<Scope> = Vec::new();
    let mut remap: Vec<Vec<(usize, Vec<usize>)>> = Vec::new();
    for (index, scope) in scopes.iter().enumerate() {
        let members: Vec<usize> = (0..objects.len()).filter(|&i| objects[i].scope == index).collect();
        if scope.kind != ScopeKind::Files || members.is_empty() {
            remap.push(vec![(new_scopes.len(), members)]);
            new_scopes.push(scope.clone());
            continue;
        }
        let sets = boundaries(objects, &members, sources, &scope.path);
        if sets.len() == 1 {
            // One set is named by the directory that holds its files, not by the path that
            // was scanned: `.`, `deploy` and `deploy/app.yaml` name one deployment alike, so
            // findings keep their fingerprints when the scanned path changes.
            let dirs = members.iter().map(|&o| {
                let file = sources.path(objects[o].span.file);
                file.parent().unwrap_or(Path::new("")).to_path_buf()
            });
            let path = common_ancestor(dirs)
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or_else(|| scope.path.clone());
            remap.push(vec![(new_scopes.len(), members)]);
            new_scopes.push(Scope {
                kind: ScopeKind::Files,
                path,
            });
            continue;
        }
        let mut here = Vec::new();
        for (path, set) in sets {
            here.push((new_scopes.len(), set));
            new_scopes.push(Scope {
                kind: ScopeKind::Files,
                path,
            });
        }
        remap.push(here);
    }
    for sets in remap {
        for (scope, members) in sets {
            for o in members {
                objects[o].scope = scope;
            }
        }
    }
    *scopes = new_scopes;
}

/// The sets of one `files` scope, each with its path, in path order.
fn boundaries(objects: &[Object], members: &[usize], sources: &SourceMap, root: &Path) -> Vec<(PathBuf, Vec<usize>)> {
    // Paths an Argo CD Application or a Flux Kustomization deploys, relative to the scanned
    // path: every directory under a recursive one is one deployment.
    let written: Vec<&DeployedPath> = members
        .iter()
        .filter_map(|&o| match &objects[o].body {
            Body::DeploySource { paths } => Some(paths),
            _ => None,
        })
        .flatten()
        .collect();
    // Lexically, as the files' display paths are written (`.` adds nothing).
    let at = |p: &DeployedPath| crate::source::normalize(&root.join(p.path.trim_end_matches('/')));
    let mut groups = variant_groups(objects, members, sources);
    // Argo CD Applications' `directory.include`/`exclude` decide which files of a directory
    // each deploys: files deployed by different Applications are different deployments. The
    // largest such set keeps the directory; each other is a variant of its own.
    let filtered: Vec<&DeployedPath> = written
        .iter()
        .copied()
        .filter(|p| p.include.is_some() || p.exclude.is_some())
        .collect();
    let mut split = Vec::new();
    for group in groups.iter_mut().filter(|g| g.variant_file.is_none()) {
        let covering: Vec<(&DeployedPath, PathBuf)> = filtered
            .iter()
            .map(|p| (*p, at(p)))
            .filter(|(p, dir)| group.dir == *dir || (p.recurse && group.dir.starts_with(dir)))
            .collect();
        if covering.is_empty() {
            continue;
        }
        let mut by_deployers: BTreeMap<Vec<bool>, Vec<usize>> = BTreeMap::new();
        for &o in &group.objects {
            let file = sources.path(objects[o].span.file);
            let key = covering
                .iter()
                .map(|(p, dir)| p.admits(file.strip_prefix(dir).unwrap_or(file)))
                .collect();
            by_deployers.entry(key).or_default().push(o);
        }
        let Some(kept) = by_deployers
            .iter()
            .max_by_key(|(_, objs)| objs.len())
            .map(|(k, _)| k.clone())
        else {
            continue;
        };
        for (key, objs) in by_deployers {
            if key == kept {
                group.objects = objs;
                continue;
            }
            let file = objs
                .iter()
                .map(|&o| sources.path(objects[o].span.file).to_path_buf())
                .min()
                .unwrap_or_default();
            split.push(Group {
                dir: group.dir.clone(),
                variant_file: Some(file),
                objects: objs,
                left_out: true,
            });
        }
    }
    groups.extend(split);
    groups.retain(|g| !g.objects.is_empty());
    let declared: Vec<PathBuf> = written
        .iter()
        .filter(|p| p.recurse)
        .map(|p| at(p))
        .filter(|p| p != root && p.is_dir())
        .collect();
    let mut sets = Sets {
        parent: (0..groups.len()).collect(),
        ids: groups
            .iter()
            .map(|g| g.objects.iter().map(|&o| objects[o].id.to_string()).collect())
            .collect(),
    };
    for deployed in &declared {
        let under: Vec<usize> = (0..groups.len())
            .filter(|&g| groups[g].variant_file.is_none() && groups[g].dir.starts_with(deployed))
            .collect();
        for pair in under.windows(2) {
            sets.join(pair[0], pair[1]);
        }
    }
    // References that cross directories join the nearest directory that has their target.
    for g in 0..groups.len() {
        for &o in &groups[g].objects {
            let wanted = |w: &Object| references(&objects[o], w);
            let here = |grp: &Group| grp.objects.iter().any(|&w| wanted(&objects[w]));
            if !references_anything(&objects[o]) || here(&groups[g]) || groups[g].left_out {
                continue;
            }
            let nearest = (0..groups.len())
                .filter(|&h| h != g && here(&groups[h]))
                .min_by_key(|&h| (distance(&groups[g].dir, &groups[h].dir), h));
            if let Some(h) = nearest {
                sets.join(g, h);
            }
        }
    }
    let mut joined: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (g, group) in groups.iter().enumerate() {
        let r = sets.root(g);
        joined.entry(r).or_default().extend(group.objects.iter().copied());
    }
    let mut out: Vec<(PathBuf, Vec<usize>)> = joined
        .into_iter()
        .map(|(r, mut set)| {
            set.sort_unstable();
            let g = &groups[r];
            (g.variant_file.clone().unwrap_or_else(|| g.dir.clone()), set)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Union-find over groups, with the objects each set defines: two sets that define one
/// object are two environments and never join.
struct Sets {
    parent: Vec<usize>,
    ids: Vec<BTreeSet<String>>,
}

impl Sets {
    fn root(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    fn join(&mut self, a: usize, b: usize) {
        let (a, b) = (self.root(a), self.root(b));
        if a == b || !self.ids[a].is_disjoint(&self.ids[b]) {
            return;
        }
        let (keep, gone) = (a.min(b), a.max(b));
        self.parent[gone] = keep;
        let moved = std::mem::take(&mut self.ids[gone]);
        self.ids[keep].extend(moved);
    }
}

/// Group objects by directory, then split each directory's files into variants: a file that
/// defines an object an earlier file of the directory defines goes to the first variant
/// without it.
fn variant_groups(objects: &[Object], members: &[usize], sources: &SourceMap) -> Vec<Group> {
    let mut by_dir: BTreeMap<PathBuf, BTreeMap<PathBuf, Vec<usize>>> = BTreeMap::new();
    for &o in members {
        let file = sources.path(objects[o].span.file).to_path_buf();
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        by_dir.entry(dir).or_default().entry(file).or_default().push(o);
    }
    let mut groups = Vec::new();
    for (dir, files) in by_dir {
        let mut variants: Vec<(Group, BTreeSet<String>)> = Vec::new();
        for (file, objs) in files {
            let defined: BTreeSet<String> = objs
                .iter()
                .filter(|&&o| !objects[o].embedded && !objects[o].id.name.is_empty())
                .map(|&o| objects[o].id.to_string())
                .collect();
            let slot = variants.iter().position(|(_, ids)| ids.is_disjoint(&defined));
            let slot = slot.unwrap_or_else(|| {
                variants.push((
                    Group {
                        dir: dir.clone(),
                        variant_file: (!variants.is_empty()).then(|| file.clone()),
                        objects: Vec::new(),
                        left_out: false,
                    },
                    BTreeSet::new(),
                ));
                variants.len() - 1
            });
            let (group, ids) = &mut variants[slot];
            group.objects.extend(objs);
            ids.extend(defined);
        }
        groups.extend(variants.into_iter().map(|(g, _)| g));
    }
    groups
}

/// Objects that point at workloads another file may define.
fn references_anything(o: &Object) -> bool {
    matches!(o.body, Body::HorizontalPodAutoscaler(_) | Body::PodDisruptionBudget(_))
}

/// Whether `o` refers to the workload `w`: an HPA's scale target, a PDB's selected pods.
fn references(o: &Object, w: &Object) -> bool {
    let Some(workload) = w.workload() else { return false };
    if o.id.namespace != w.id.namespace {
        return false;
    }
    match &o.body {
        Body::HorizontalPodAutoscaler(h) => {
            h.scale_target_ref.kind == w.id.kind && h.scale_target_ref.name == w.id.name
        }
        Body::PodDisruptionBudget(p) => p
            .selector
            .as_ref()
            .is_some_and(|s| !s.is_empty() && s.matches(&workload.template.labels)),
        _ => false,
    }
}

/// The deepest directory that holds every one of `dirs` (`None` when there are none).
fn common_ancestor(dirs: impl Iterator<Item = PathBuf>) -> Option<PathBuf> {
    dirs.reduce(|a, b| {
        a.components()
            .zip(b.components())
            .take_while(|(x, y)| x == y)
            .map(|(x, _)| x)
            .collect()
    })
}

/// How far apart two directories are: the components to climb from each to their common
/// ancestor.
fn distance(a: &Path, b: &Path) -> usize {
    let (ca, cb): (Vec<_>, Vec<_>) = (a.components().collect(), b.components().collect());
    let common = ca.iter().zip(&cb).take_while(|(x, y)| x == y).count();
    ca.len() + cb.len() - 2 * common
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_set_is_named_by_the_directory_that_holds_it() {
        let dirs = ["deploy/k8s/a", "deploy/k8s", "deploy/k8s/b/c"].map(PathBuf::from);
        assert_eq!(common_ancestor(dirs.into_iter()), Some(PathBuf::from("deploy/k8s")));
        assert_eq!(common_ancestor([PathBuf::from("")].into_iter()), Some(PathBuf::new()));
    }

    #[test]
    fn distance_counts_steps_through_the_common_ancestor() {
        assert_eq!(distance(Path::new("a/b"), Path::new("a/b")), 0);
        assert_eq!(distance(Path::new("a/b"), Path::new("a/c")), 2);
        assert_eq!(distance(Path::new("a/b/c"), Path::new("a")), 2);
    }
}
