import './base.css';
import './restore.css';
