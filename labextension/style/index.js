import './base.css';
import './restore.css';
import './progress.css';
import './prune.css';
