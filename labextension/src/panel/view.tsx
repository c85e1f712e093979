import * as React from 'react';

import { toOptions } from '../form/model';
import { isSweeping } from '../form/sweep';
import { loadOffer } from '../results/load-result';
import { jobFunctionOf, TagEditor } from '../tags/editor';
import { BackendInfo } from './form/backend';
import { DefaultsInfo } from './form/defaults';
import { DiagnosticList, Validation } from './form/diagnostics';
import { EnvEditor } from './form/env';
import { Section } from './shared/fields';
import { JobsList } from './jobs/jobs';
import {
  ResourceFields,
  RuntimePicker,
  ShapeFields,
  QueueChoice,
  TrainCallChoice
} from './form/job-form';
import { PackagesEditor } from './form/packages';
import { PreviewView } from './preview/preview';
import { RuntimePackages } from './form/runtime-packages';
import { StorageFields } from './storage/storage';
import { ParametersEditor } from './sweep/parameters';
import { SubmitBar } from './jobs/submit-bar';
import {
  RestoredBadge,
  RestoredNote,
  restoredSections
} from './form/restored-note';
import type { PanelState } from './state';

/**
 * The whole panel: backend, cell tags, the job form, checks, preview,
 * Submit and the jobs list.
 */
export function PanelView(props: { state: PanelState }): JSX.Element {
  const { state } = props;
  const notebook = state.notebook;
  const jobs = state.jobList;
  return (
    <div className="kale-ext-PanelView">
      <header className="kale-ext-Header">
        <h2>Distributed training</h2>
        <BackendInfo
          backend={state.server.backend}
          error={state.server.loadError}
        />
      </header>
      {notebook ? (
        <JobSetup state={state} />
      ) : (
        <p className="kale-ext-Empty">
          Open a notebook to set up a training job from it.
        </p>
      )}
      {/* before the jobs in the tab order; drawn at the foot (base.css) */}
      {notebook && (
        <SubmitBar
          blocker={state.submitBlocker}
          note={state.submitNote}
          submitting={state.submitting}
          onSubmit={() => void state.submit()}
          label={isSweeping(state.sweep) ? 'Start sweep' : undefined}
          current={state.currentJob}
          failed={
            state.actions.notice?.kind === 'error' &&
            state.actions.notice.diagnostics !== undefined
              ? state.actions.notice.text
              : ''
          }
          now={Date.now()}
          onLogs={name => state.openLogs(name)}
        />
      )}
      <Section
        id="jobs"
        title="Jobs"
        badge={
          jobs.jobs && (
            <span
              className="kale-ext-Count"
              aria-label={`${jobs.jobs.length} jobs`}
            >
              {jobs.jobs.length}
            </span>
          )
        }
      >
        <JobsList
          jobs={jobs.jobs}
          error={jobs.error}
          deleting={jobs.deleting}
          now={Date.now()}
          view={jobs.view}
          onView={change => jobs.setView(change)}
          notebook={notebook?.context.path ?? null}
          metrics={name => jobs.metricsOf(name)}
          onOpenFailure={job => void state.openFailure(job)}
          revealing={jobs.revealing}
          onRevealed={() => jobs.revealed()}
          onLogs={name => state.openLogs(name)}
          onRerun={name => void state.rows.rerun(name)}
          onResume={name => void state.rows.resume(name)}
          onEditRerun={job => state.editAndRerun(job)}
          onStop={name => void state.rows.stop(name)}
          busy={name => state.rows.busy.has(name)}
          rowMessage={name => state.rows.message(name)}
          onDismiss={name => state.rows.dismiss(name)}
          onDelete={name => void state.actions.delete(name)}
          selected={jobs.selected}
          onSelect={(name, on) => jobs.select(name, on)}
          onCompare={names => state.compare(names)}
          onSweep={name => state.openSweep(name)}
          outputs={name => state.service.jobOutputs(name)}
          fileUrl={(path, download) => state.service.fileUrl(path, download)}
          loadOffer={job => loadOffer(job, jobs.results.get(job.name))}
          onLoadResult={job => void state.loader.load(job)}
          onPrune={body => state.service.pruneJobs(body)}
          onPruned={() => jobs.refresh()}
        />
      </Section>
    </div>
  );
}

function JobSetup(props: { state: PanelState }): JSX.Element {
  const { state } = props;
  const { form, fieldErrors: errors, compile, compiled } = state;
  const onChange = (change: Parameters<PanelState['updateForm']>[0]) =>
    state.updateForm(change);
  const common = { form, errors, onChange };
  const notice = state.actions.notice;
  const local = state.server.backend?.name === 'local';
  const note = state.memory.note;
  const restored = restoredSections(note);
  // a section holding a restored value is badged, and opened when collapsed
  const mark = (id: string) =>
    restored.has(id) ? { open: true, badge: <RestoredBadge /> } : {};
  return (
    <>
      <div className="kale-ext-Notebook" title={state.notebook?.context.path}>
        Notebook{' '}
        <strong>{state.notebook?.context.localPath.split('/').pop()}</strong>
      </div>
      {note && (
        <RestoredNote
          note={note}
          onUseNotebook={() => state.useNotebookValues()}
          onDismiss={() => state.memory.dismiss()}
        />
      )}
      {state.memory.error && (
        <div className="kale-ext-RestoredNote kale-ext-mod-error" role="alert">
          {state.memory.error}
        </div>
      )}
      <Section id="tags" title="Cell tags">
        <TagEditor
          cell={state.activeCell}
          grammar={state.server.tags}
          change={state.roles.change}
          onChoose={tag => state.roles.choose(tag)}
          onUndo={() => state.roles.undo()}
          jobFunction={jobFunctionOf(compile?.provenance)}
        />
      </Section>
      <Section id="job" title="Job" {...mark('job')}>
        <DefaultsInfo
          defaults={state.server.defaults}
          error={state.server.defaultsError}
          onEdit={
            state.canEditDefaults ? () => state.editDefaults() : undefined
          }
        />
        <TrainCallChoice {...common} calls={compile?.train_calls ?? []} />
        <RuntimePicker
          {...common}
          runtimes={state.server.runtimes}
          runtime={state.runtime}
          resolved={compile?.runtime ?? state.server.defaults?.defaults.runtime}
        />
        {state.runtime && (
          <RuntimePackages
            service={state.service}
            runtime={state.runtime.name}
          />
        )}
        <ShapeFields {...common} runtime={state.runtime} compile={compile} />
        <QueueChoice {...common} queues={state.server.queues} />
      </Section>
      <Section id="resources" title="Resources per node" {...mark('resources')}>
        <ResourceFields
          {...common}
          defaultGpu={state.server.defaults?.defaults.gpu}
          local={local}
          reported={compile?.local_resources}
        />
      </Section>
      <Section id="parameters" title="Parameters" {...mark('parameters')}>
        <ParametersEditor
          {...common}
          defaults={compiled?.result.parameters}
          sweep={state.sweep}
          onSweep={change => state.updateSweep(change)}
          state={
            compiled
              ? compiled.stale
                ? 'stale'
                : 'known'
              : compile || state.compileError
                ? 'unreadable'
                : 'checking'
          }
        />
      </Section>
      <Section id="env" title="Environment variables" {...mark('env')}>
        <EnvEditor {...common} />
      </Section>
      <Section id="storage" title="Storage" open={false} {...mark('storage')}>
        <StorageFields {...common} local={local} />
      </Section>
      <Section
        id="packages"
        title="Packages"
        open={false}
        {...mark('packages')}
      >
        <PackagesEditor
          {...common}
          detected={compiled?.result.packages ?? []}
          unknown={!compiled && (compile !== null || !!state.compileError)}
          local={local}
        />
      </Section>
      <Section id="checks" title="Checks">
        <Validation
          compile={compile}
          compiling={state.compiling}
          error={state.compileError}
          form={form}
          fieldErrors={errors}
          onSelect={d => void state.selectCell(d)}
        />
      </Section>
      {notice && (
        <div
          className={`kale-ext-Notice kale-ext-mod-${notice.kind}`}
          role={notice.kind === 'error' ? 'alert' : 'status'}
        >
          <div>{notice.text}</div>
          {notice.details?.map((d, i) => (
            <div key={i}>{d}</div>
          ))}
          {notice.diagnostics && (
            <DiagnosticList
              diagnostics={notice.diagnostics}
              onSelect={d => void state.selectCell(d)}
            />
          )}
        </div>
      )}
      <Section id="preview" title="Preview">
        <PreviewView
          compile={compile}
          backend={state.server.backend}
          runtime={state.runtime}
          packages={form.packages}
          options={toOptions(form)}
          onSelect={d => void state.selectCell(d)}
          sweep={state.sweep}
          onViewSource={(name, source) => state.viewSource(name, source)}
        />
      </Section>
    </>
  );
}
