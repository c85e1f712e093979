import './base.css';
import './progress.css';
